#!/bin/sh
# Writes a man page from its template (man/NAME.in) and the built binary's own --help, so the
# options in the page are always those the binary takes. Run by man/CMakeLists.txt at build
# time; needs only sh, sed and awk.
#   gen-man.sh TEMPLATE OUTPUT VERSION DOCDIR [BINARY]
# In the template:
#   @VERSION@ @DATE@ @DOCDIR@   the project version, the date (SOURCE_DATE_EPOCH if set), the docs
#   @OPTIONS@                   alone on a line: BINARY --help's options as tagged paragraphs
#   @COMMANDS@                  alone on a line: for every command in BINARY --help's "commands:"
#                               list, a subsection with the text of BINARY COMMAND --help
set -eu
template=$1
output=$2
version=$3
docdir=$4
binary=${5:-}

if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
    date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)
else
    date=$(date -u +%Y-%m-%d)
fi

# help_to_roff MODE: --help text on stdin, roff on stdout. Option lists ("options:" up to
# the next blank line, in Boost.Program_options' layout) become tagged paragraphs; MODE
# "options" prints only them, "full" also prints the rest of the text as it is (no fill).
help_to_roff() {
    awk -v mode="$1" '
    function esc(s) { gsub(/\\/, "\\e", s); return s }
    function lead(s) { return (s ~ /^[.\047]/) ? "\\&" s : s }
    function flush() {
        if (tag != "") { print ".TP"; print tag; print lead(esc(desc)) }
        tag = ""; desc = ""
    }
    function verbatim(s) {
        if (!nf) { print ".PP"; print ".nf"; nf = 1 }
        print lead(esc(s))
    }
    function end_verbatim() { if (nf) { print ".fi"; nf = 0 } }
    # "-n [ --network ] arg  text" or "--json  text": the option, bold, and its argument.
    function option(line,    m, names, rest, short, long, arg) {
        sub(/^  +/, "", line)
        if (match(line, /^-[A-Za-z0-9] \[ --[A-Za-z0-9][-A-Za-z0-9]* \]/)) {
            short = substr(line, 2, 1)
            long = substr(line, 8, RLENGTH - 9)
            rest = substr(line, RLENGTH + 1)
            names = "\\fB\\-" short "\\fR, \\fB\\-\\-" esc(long) "\\fR"
        } else if (match(line, /^--[A-Za-z0-9][-A-Za-z0-9]*/)) {
            long = substr(line, 3, RLENGTH - 2)
            rest = substr(line, RLENGTH + 1)
            names = "\\fB\\-\\-" esc(long) "\\fR"
        } else {
            return 0
        }
        arg = ""
        if (rest ~ /^ arg( |$)/) { arg = " \\fIarg\\fR"; rest = substr(rest, 5) }
        sub(/^ +/, "", rest)
        flush()
        tag = names arg
        desc = rest
        return 1
    }
    { sub(/ +$/, "") }
    /^[^ ].*options:?$/ || /^options:?$/ {
        end_verbatim(); flush(); inopts = 1
        if (mode == "full") { print ".PP"; print "\\fB" esc($0) "\\fR" }
        next
    }
    inopts && /^$/ { flush(); inopts = 0; next }
    inopts && /^  -/ { if (option($0)) next }
    inopts && /^   +[^ ]/ && tag != "" { s = $0; sub(/^ +/, "", s); desc = desc " " s; next }
    inopts { flush(); inopts = 0 }
    mode == "full" && /^$/ { end_verbatim(); next }
    mode == "full" { verbatim($0) }
    END { flush(); end_verbatim() }
    '
}

tmp="$output.tmp"
trap 'rm -f "$tmp"' EXIT
: >"$tmp"
while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
        @OPTIONS@)
            "$binary" --help | help_to_roff options >>"$tmp"
            ;;
        @COMMANDS@)
            # The command names: the usage's "commands:" list, names followed by two spaces.
            "$binary" --help | sed -n '/^commands:$/,/^$/s/^  \([a-z][-a-z]*\( [a-z][-a-z]*\)\{0,1\}\)  .*/\1/p' >"$tmp.cmds"
            [ -s "$tmp.cmds" ] || { echo "gen-man.sh: no commands in '$binary --help'" >&2; exit 1; }
            while IFS= read -r cmd; do
                printf '.SS "%s %s"\n' "$(basename "$binary")" "$cmd" >>"$tmp"
                # shellcheck disable=SC2086  # "map show" is two words
                "$binary" $cmd --help | help_to_roff full >>"$tmp"
            done <"$tmp.cmds"
            rm -f "$tmp.cmds"
            ;;
        *)
            printf '%s\n' "$line" | sed -e "s|@VERSION@|$version|g" -e "s|@DATE@|$date|g" -e "s|@DOCDIR@|$docdir|g" >>"$tmp"
            ;;
    esac
done <"$template"
mv "$tmp" "$output"
trap - EXIT
