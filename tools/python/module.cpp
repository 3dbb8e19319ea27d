// The Python module hetcast._hetcast: Node, its job handles, buffers and files
// (docs/embedding.md). A thin layer over runtime/node.hpp; no logic of its own.
#include <pybind11/chrono.h>
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstring>

#include <nlohmann/json.hpp>

#include "hetcast/error.hpp"
#include "hetcast/model/loader.hpp"
#include "hetcast/net/identity.hpp"
#include "hetcast/runtime/config.hpp"
#include "hetcast/runtime/node.hpp"
#include "hetcast/runtime/report.hpp"
#include "hetcast/runtime/service.hpp"

namespace py = pybind11;
using namespace hetcast;

namespace {

/// Any object with the buffer protocol (bytes, bytearray, memoryview, a NumPy array),
/// copied once into memory hetcast owns: the caller may change or drop it at once.
Bytes to_bytes(const py::buffer& b) {
    const py::buffer_info info = b.request();
    if (info.ndim > 0) {
        // Only C-contiguous buffers are one run of bytes.
        py::ssize_t expect = info.itemsize;
        for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
            if (info.strides[d] != expect) throw InputError("the buffer is not contiguous (numpy: np.ascontiguousarray)");
            expect *= info.shape[d];
        }
    }
    const auto size = static_cast<std::size_t>(info.size * info.itemsize);
    auto v = std::make_shared<std::vector<std::byte>>(size);
    if (size > 0) std::memcpy(v->data(), info.ptr, size);
    return v;
}

/// A received buffer, seen from Python through the buffer protocol without a copy
/// (memoryview(d), np.frombuffer(d, dtype)); read-only, alive while referenced.
struct Received {
    std::string source;
    std::uint64_t job = 0;
    MessageId message = 0;
    Bytes bytes;
};

py::object as_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

py::dict progress_dict(const JobProgress& p) {
    py::list members;
    for (const auto& m : p.members) {
        members.append(py::dict(py::arg("name") = m.name, py::arg("state") = m.state, py::arg("bytes") = m.bytes,
                                py::arg("owed") = m.owed));
    }
    return py::dict(py::arg("delivered") = p.delivered, py::arg("owed") = p.owed, py::arg("everywhere") = p.everywhere,
                    py::arg("size") = p.size, py::arg("members") = members);
}

/// A Python callable kept by C++ (a job's callbacks): its last reference may go on any
/// thread, and is dropped with the GIL held.
std::shared_ptr<py::function> hold(const py::object& f) {
    if (!PyCallable_Check(f.ptr())) throw InputError("a callback must be callable");
    return {new py::function(py::reinterpret_borrow<py::function>(f)), [](py::function* p) {
                py::gil_scoped_acquire gil;
                delete p;
            }};
}

/// The knobs of SendOptions as keyword arguments; callbacks get dicts and run with the GIL.
SendOptions options(const std::string& algo, std::uint64_t bwlimit, std::uint64_t piece, double timeout,
                    const py::object& on_progress, const py::object& on_done) {
    SendOptions o;
    o.algo = algo;
    o.bwlimit = bwlimit;
    o.piece = piece;
    if (timeout < 0) throw InputError("timeout: not negative");
    o.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout * 1000));
    if (!on_progress.is_none()) {
        o.on_progress = [f = hold(on_progress)](const JobProgress& p) {
            py::gil_scoped_acquire gil;
            try {
                (*f)(progress_dict(p));
            } catch (py::error_already_set& e) {
                e.discard_as_unraisable("hetcast on_progress");
            }
        };
    }
    if (!on_done.is_none()) {
        o.on_done = [f = hold(on_done)](const JobReport& r) {
            py::gil_scoped_acquire gil;
            try {
                (*f)(as_python(to_json(r)));
            } catch (py::error_already_set& e) {
                e.discard_as_unraisable("hetcast on_done");
            }
        };
    }
    return o;
}

/// A Node is destroyed without the GIL: its destructor joins job threads whose callbacks
/// take the GIL.
struct ReleaseGilDelete {
    void operator()(Node* n) const {
        py::gil_scoped_release nogil;
        delete n;
    }
};
using NodeHolder = std::unique_ptr<Node, ReleaseGilDelete>;

}  // namespace

PYBIND11_MODULE(_hetcast, m) {
    m.doc() = "hetcast: planned dissemination of buffers and files to many hosts over uneven networks";
    m.attr("__version__") = version();
    static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
    static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const InputError& e) {
            input_error(e.what());
        } catch (const Error& e) {
            error(e.what());
        }
    });

    py::class_<net::Identity>(m, "Identity", "A member's key and certificate, and the CA it trusts.")
        .def_static("read", &read_identity, py::arg("path"), "An identity file (hetcast keys issue).");

    py::class_<net::ClusterCa>(m, "ClusterCa", "A cluster's certificate authority (for tests and single-process use).")
        .def(py::init([](const std::string& cluster) { return net::ClusterCa::create(cluster); }), py::arg("cluster"))
        .def(
            "issue", [](const net::ClusterCa& ca, const std::string& name) { return ca.issue(name, net::Role::member); },
            py::arg("name"), "A member identity for `name`.");

    py::class_<Network>(m, "Network", "A network map: who the members are and what links them.")
        .def(py::init([](const std::string& yaml) { return parse_network(yaml, "<python>"); }), py::arg("yaml"),
             "From a network file's text.")
        .def_static("load", &load_network, py::arg("path"))
        .def_property_readonly("names", &Network::names)
        .def_property_readonly(
            "subnets",
            [](const Network& net) {
                std::vector<std::vector<std::string>> out;
                if (net.subnets()) {
                    for (const auto& g : *net.subnets()) {
                        out.emplace_back();
                        for (NodeId id : g) out.back().push_back(net.names()[id]);
                    }
                }
                return out;
            },
            "The subnets by member name (empty when the map has none).")
        .def("__str__", [](const Network& net) { return format_network(net); }, "As a network file.")
        .def("__len__", &Network::size);

    py::class_<Received>(m, "Delivery", py::buffer_protocol(),
                         "A buffer delivered to this node: memoryview(d) or numpy.frombuffer(d, dtype) see its bytes "
                         "without a copy.")
        .def_readonly("source", &Received::source)
        .def_readonly("job", &Received::job)
        .def_readonly("message", &Received::message)
        .def("__len__", [](const Received& r) { return r.bytes->size(); })
        .def("tobytes", [](const Received& r) {
            return py::bytes(reinterpret_cast<const char*>(r.bytes->data()), r.bytes->size());
        })
        .def_buffer([](Received& r) {
            return py::buffer_info(const_cast<std::byte*>(r.bytes->data()), 1, py::format_descriptor<std::uint8_t>::format(), 1,
                                   {static_cast<py::ssize_t>(r.bytes->size())}, {1}, /*readonly=*/true);
        });

    py::class_<JobHandle>(m, "Job", "A running job: progress(), cancel(), wait(), wait_for().")
        .def_property_readonly("id", &JobHandle::id)
        .def("progress", [](const JobHandle& j) { return progress_dict(j.progress()); })
        .def("cancel", &JobHandle::cancel, py::arg("why") = "cancelled by the application",
             py::call_guard<py::gil_scoped_release>())
        .def("done", &JobHandle::done)
        .def("wait", [](const JobHandle& j) {
            JobReport r;
            {
                py::gil_scoped_release nogil;
                r = j.wait();
            }
            return as_python(to_json(r));
        })
        .def(
            "wait_for",
            [](const JobHandle& j, double seconds) -> py::object {
                std::optional<JobReport> r;
                {
                    py::gil_scoped_release nogil;
                    r = j.wait_for(std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000)));
                }
                if (!r) return py::none();
                return as_python(to_json(*r));
            },
            py::arg("seconds"));

    py::class_<Node, NodeHolder>(m, "Node", "A cluster member in this process (no daemon).")
        .def(py::init([](const std::string& name, const net::Identity& identity, const std::filesystem::path& dest_root,
                         const std::string& host, std::uint16_t port) {
                 PeerConfig c;
                 c.name = name;
                 c.identity = identity;
                 c.dest_root = dest_root;
                 c.host = host;
                 c.port = port;
                 return NodeHolder(new Node(std::move(c)));
             }),
             py::arg("name"), py::arg("identity"), py::arg("dest_root") = std::filesystem::path(),
             py::arg("host") = "127.0.0.1", py::arg("port") = 0)
        .def_static(
            "from_config", [](const std::filesystem::path& p) { return NodeHolder(new Node(load_node_config(p))); },
            py::arg("daemon_config"), "As hetcastd would be from its config file (conf/hetcastd.yaml).")
        .def("start", &Node::start)
        .def("stop", &Node::stop, py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("port", &Node::port)
        .def_property_readonly("name", &Node::name)
        .def(
            "join",
            [](Node& n, const std::vector<std::tuple<std::string, std::string, std::uint16_t>>& members, const Network& map) {
                std::vector<Member> ms;
                for (const auto& [name, host, port] : members) ms.push_back({name, host, port});
                n.join(std::move(ms), map);
            },
            py::arg("members"), py::arg("map"), "members: [(name, host, port)], map: a Network naming them.")
        .def_property_readonly("map", &Node::map, "The Network plans are made on (None before a join or probe).")
        .def(
            "probe",
            [](Node& n, double tolerance, int repeats, double seconds) {
                ProbeOptions o;
                o.tolerance = tolerance;
                o.repeats = repeats;
                o.seconds = seconds;
                return n.probe(std::move(o));
            },
            py::kw_only(), py::arg("tolerance") = 0.2, py::arg("repeats") = 3, py::arg("seconds") = 0.3,
            "Measures every member as `hetcast probe` does; the Network found, given to the members.",
            py::call_guard<py::gil_scoped_release>())
        .def(
            "join_seed", [](Node& n, const std::string& host, std::uint16_t port) { n.join(host, port); },
            py::arg("host"), py::arg("port"), "Through a running hetcastd, as `hetcastd --join` does.",
            py::call_guard<py::gil_scoped_release>())
        .def(
            "start_broadcast",
            [](Node& n, const py::buffer& data, const std::string& algo, std::uint64_t bwlimit, std::uint64_t piece,
               double timeout, const py::object& on_progress, const py::object& on_done) {
                Bytes b = to_bytes(data);
                SendOptions o = options(algo, bwlimit, piece, timeout, on_progress, on_done);
                py::gil_scoped_release nogil;
                return n.start_broadcast(std::move(b), std::move(o));
            },
            py::arg("data"), py::kw_only(), py::arg("algo") = "auto", py::arg("bwlimit") = 0, py::arg("piece") = 0,
            py::arg("timeout") = 0.0, py::arg("on_progress") = py::none(), py::arg("on_done") = py::none())
        .def(
            "start_multicast",
            [](Node& n, const py::buffer& data, std::vector<std::string> dests, const std::string& algo,
               std::uint64_t bwlimit, std::uint64_t piece, double timeout, const py::object& on_progress,
               const py::object& on_done) {
                Bytes b = to_bytes(data);
                SendOptions o = options(algo, bwlimit, piece, timeout, on_progress, on_done);
                py::gil_scoped_release nogil;
                return n.start_multicast(std::move(b), std::move(dests), std::move(o));
            },
            py::arg("data"), py::arg("dests"), py::kw_only(), py::arg("algo") = "auto", py::arg("bwlimit") = 0,
            py::arg("piece") = 0, py::arg("timeout") = 0.0, py::arg("on_progress") = py::none(),
            py::arg("on_done") = py::none())
        .def(
            "start_push",
            [](Node& n, std::vector<std::filesystem::path> paths, std::vector<std::string> dests, const std::string& name,
               bool recursive, bool preserve, const std::string& algo, std::uint64_t bwlimit, std::uint64_t piece,
               double timeout, const py::object& on_progress, const py::object& on_done) {
                PushFiles f;
                f.paths = std::move(paths);
                f.dests = std::move(dests);
                f.name = name;
                f.recursive = recursive;
                f.preserve = preserve;
                SendOptions o = options(algo, bwlimit, piece, timeout, on_progress, on_done);
                py::gil_scoped_release nogil;
                return n.start_push(std::move(f), std::move(o));
            },
            py::arg("paths"), py::kw_only(), py::arg("dests") = std::vector<std::string>{}, py::arg("name") = "",
            py::arg("recursive") = false, py::arg("preserve") = true, py::arg("algo") = "auto", py::arg("bwlimit") = 0,
            py::arg("piece") = 0, py::arg("timeout") = 0.0, py::arg("on_progress") = py::none(),
            py::arg("on_done") = py::none())
        .def(
            "offer", [](Node& n, const std::string& key, const py::buffer& data) { n.offer(key, to_bytes(data)); },
            py::arg("key"), py::arg("data"))
        .def("withdraw", &Node::withdraw, py::arg("key"))
        .def(
            "start_exchange",
            [](Node& n, const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>>& pattern,
               const std::string& algo, std::uint64_t bwlimit, double timeout, const py::object& on_progress,
               const py::object& on_done) {
                std::vector<ExchangeEntry> p;
                for (const auto& [source, key, dests] : pattern) p.push_back({source, key, dests});
                SendOptions o = options(algo, bwlimit, 0, timeout, on_progress, on_done);
                py::gil_scoped_release nogil;
                return n.start_exchange(std::move(p), std::move(o));
            },
            py::arg("pattern"), py::kw_only(), py::arg("algo") = "auto", py::arg("bwlimit") = 0,
            py::arg("timeout") = 0.0, py::arg("on_progress") = py::none(), py::arg("on_done") = py::none(),
            "pattern: [(source, key, dests)], each source having offer()ed its buffer under key.")
        .def(
            "receive",
            [](Node& n, double seconds) -> py::object {
                std::optional<Delivery> d;
                {
                    py::gil_scoped_release nogil;
                    d = n.receive(std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000)));
                }
                if (!d) return py::none();
                return py::cast(Received{d->source, d->job, d->message, d->bytes});
            },
            py::arg("timeout") = 5.0, "The next buffer delivered here, or None after `timeout` seconds.")
        .def(
            "on_landed",
            [](Node& n, const py::object& callback) {
                if (callback.is_none()) return n.on_landed({});
                n.on_landed([f = hold(callback)](const Landed& l) {
                    py::gil_scoped_acquire gil;
                    try {
                        (*f)(py::dict(py::arg("source") = l.source, py::arg("job") = l.job,
                                      py::arg("message") = l.message, py::arg("path") = l.path.string(),
                                      py::arg("bytes") = l.bytes, py::arg("entries") = l.entries));
                    } catch (py::error_already_set& e) {
                        e.discard_as_unraisable("hetcast on_landed");
                    }
                });
            },
            py::arg("callback"),
            "callback(dict(source, job, message, path, bytes, entries)) for every file or tree that lands here; "
            "None: no calls.");
}
