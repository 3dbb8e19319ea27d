// What arrives for a participant's jobs once set up (peer_setup.cpp): their start, their
// data and their cancellations. The task list that runs a job is in peer_tasks.cpp.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hetcast/error.hpp"
#include "hetcast/runtime/body.hpp"
#include "hetcast/runtime/files.hpp"
#include "hetcast/runtime/job.hpp"
#include "hetcast/runtime/tree.hpp"
#include "../wire/frames.hpp"
#include "peer_arrivals.hpp"
#include "peer_pace.hpp"

namespace hetcast::detail {
using json = nlohmann::json;
using net::ConnectionPtr;
using net::Frame;
using net::FrameType;

void Arrivals::on_start(const ConnectionPtr& c, const Frame& f) {
    auto job = participant_.find(f.header.job);
    if (!job) {
        // Dropped meanwhile (cancelled, or its start came too late), or never taken: the
        // connection stays, it may be a coordinator's that carries other jobs.
        core_.log(LogLevel::info, "ignored a start of job " + std::to_string(f.header.job) + " from '" + c->peer() +
                                "': no such job here");
        return;
    }
    if (job->coordinator != c) throw InputError("start of a job from another than its coordinator");
    const JobStart start = job_start_from_json(net::as_text(f.payload));
    {
        std::lock_guard lock(job->mu);
        for (const auto& r : start.resume) {
            if (r.message >= job->plan.messages.size() || r.offset > job->plan.messages[r.message].size) {
                throw InputError("a start resumes a message past its end");
            }
            job->resume[{r.message, r.to}] = r.offset;
        }
    }
    participant_.start_runner(job);
}

void Arrivals::on_pace(const ConnectionPtr& c, const Frame& f) {
    auto job = participant_.find(f.header.job);
    if (!job) return;  // over here already
    if (job->coordinator != c) {
        core_.log(LogLevel::warn, "ignored a pace of job " + std::to_string(f.header.job) + " from '" + c->peer() +
                                      "', which does not coordinate it");
        return;
    }
    apply_paces(*job, job_pace_from_json(net::as_text(f.payload)));
}

void Arrivals::refuse_lane(const ConnectionPtr& c, const Frame& f) {
    const std::string why = "job " + std::to_string(f.header.job) + " is over here (or was never taken)";
    core_.log(LogLevel::info, "resetting the connection with '" + c->peer() + "': " + net::to_string(f.header.type) + " of " + why);
    c->abort(why);
}

void Arrivals::on_data(const ConnectionPtr& c, Frame&& f) {
    auto job = participant_.find(f.header.job);
    // Data comes on a lane of its job only: a lane whose job is over here is reset, so that
    // its sender stops at once.
    if (!job) return refuse_lane(c, f);
    std::uint64_t report = 0;
    {
        std::lock_guard lock(job->mu);
        Recv& r = expect(*job, c, f.header.message);
        connections_.note_lane(*job, c);
        if (r.done || r.ended || !r.error.empty() || job->aborted) return;
        const std::uint64_t size = job->plan.messages[f.header.message].size;
        if (r.got + f.payload.size() > size) {
            r.error = "'" + c->peer() + "' sent more than the " + std::to_string(size) + " bytes of " +
                      message_label(f.header.message);
        } else {
            try {
                const std::size_t n = f.payload.size();
                const double t = now_s();
                if (r.got == 0) r.first = f.began == Clock::time_point{} ? t : seconds_of(f.began);
                r.last = t;
                if (r.pieces) {
                    if (core_.cfg.tamper) core_.cfg.tamper(job->plan.job, f.header.message, r.got, f.payload);
                    pieces_.take(*job, r, c, f.header.message, f.payload);
                } else if (r.sink) {
                    r.sink->write(std::move(f.payload));
                } else {
                    // What the plan claims is reserved only up to 64 MiB; past that it grows as data comes.
                    if (r.buf.empty()) r.buf.reserve(std::min<std::uint64_t>(size, std::uint64_t{64} << 20));
                    r.buf.insert(r.buf.end(), f.payload.begin(), f.payload.end());
                    r.buf_hash->add(std::move(f.payload));
                }
                r.got += n;
                if (r.keep) job->unreported += n;
                if (job->unreported >= progress_step) report = std::exchange(job->unreported, 0);
            } catch (const std::exception& e) {
                r.error = e.what();
            }
        }
        if (!r.error.empty() && r.pieces) r.pieces->fail(r.error);
        job->cv.notify_all();
    }
    if (report) runner_.emit(*job, JobEvent{JobEvent::Kind::progress, now_s(), 0, report, {}});
}

void Arrivals::on_data_end(const ConnectionPtr& c, const Frame& f) {
    auto job = participant_.find(f.header.job);
    if (!job) return refuse_lane(c, f);  // as in on_data
    if (f.payload.size() != 32) throw InputError("a data_end frame without a SHA-256");
    std::lock_guard lock(job->mu);
    Recv& r = expect(*job, c, f.header.message);
    connections_.note_lane(*job, c);
    if (r.done || r.ended) return;
    r.ended = true;
    std::copy(f.payload.begin(), f.payload.end(), r.sent_sha.begin());
    job->cv.notify_all();
}

void Arrivals::on_cancel(const ConnectionPtr& c, const Frame& f) {
    auto job = participant_.find(f.header.job);
    if (job) cancel(c, f, *job);
    if (f.header.message == net::all_messages) {
        // The coordinator ends the push: no next try comes for what this member parked when
        // its feeder went first (likely with small pieces). After the abort, nothing parks.
        (void)parked_.drop_job(f.header.job, c->peer());
    }
}

void Arrivals::cancel(const ConnectionPtr& c, const Frame& f, Job& job) {
    const std::string why(net::as_text(f.payload));
    // Only the job's coordinator (or its parent) cancels it, or a message's feeder that message: a member
    // cannot stop jobs it merely knows the id of.
    const std::string& who = c->peer();
    // Down a control tree, the parent it took its plan from passes the coordinator's on.
    bool allowed = job.plan.coordinator == who || (job.coordinator && job.coordinator == c);
    if (!allowed && f.header.message != net::all_messages) {
        std::lock_guard lock(job.mu);
        const auto it = job.recv.find(f.header.message);
        allowed = it != job.recv.end() && it->second.from == who;
    }
    if (!allowed) {
        core_.log(LogLevel::warn, "ignored a cancel of job " + std::to_string(f.header.job) + " from '" + who + "', which neither coordinates it nor feeds that message");
        return;
    }
    if (f.header.message == net::all_messages) {
        participant_.abort(job, why);
    } else {
        participant_.cancel_receive(job, f.header.message, why);
    }
}

}  // namespace hetcast::detail
