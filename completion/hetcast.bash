# bash completion for hetcast(1) and hetcastd(1).
# Installed as share/bash-completion/completions/hetcast (and .../hetcastd); to try it from
# a checkout: source completion/hetcast.bash
#
# Commands, options and algorithm names come from the program's own --help (read once per
# shell), so they follow the binary. Member names (--to, --from, --exclude, -w, leave) come
# from 'hetcast status --json' (at most 3 s), else from the cluster file the daemon's config
# names; they are kept for 30 s. Groups (@NAME) come from the cluster file's 'groups:'. When no daemon answers and there is no config, nothing is
# offered and nothing is printed.

# The program being completed, as typed (a leading ~ expanded).
_hetcast_prog() {
    local prog=${COMP_WORDS[0]:-hetcast}
    printf '%s\n' "${prog/#\~/$HOME}"
}

# _hetcast_run ARGS...: runs the program, quietly; at most 3 s when `timeout` is there.
_hetcast_run() {
    local prog timeout=()
    prog=$(_hetcast_prog)
    command -v -- "$prog" >/dev/null 2>&1 || return 1
    command -v timeout >/dev/null 2>&1 && timeout=(timeout 3)
    "${timeout[@]}" "$prog" "$@" 2>/dev/null </dev/null
}

# _hetcast_help CMD...: the --help text of `PROG CMD...`, cached per program and command.
declare -gA _hetcast_help_cache 2>/dev/null || true
_hetcast_help() {
    local key="${COMP_WORDS[0]} $*"
    if [[ -z ${_hetcast_help_cache[$key]+set} ]]; then
        _hetcast_help_cache[$key]=$(_hetcast_run "$@" --help)
    fi
    printf '%s\n' "${_hetcast_help_cache[$key]}"
}

# The commands: the first column of the usage's "commands:" list.
_hetcast_commands() {
    _hetcast_help | sed -n '/^commands:$/,/^$/s/^  \([a-z][-a-z]*\)[ a-z]*  .*/\1/p' | sort -u
}

# Every --option a command's help mentions.
_hetcast_options() {
    _hetcast_help "$@" | grep -oE '(^|[][ (,|])--[a-z][-a-z0-9]*' | sed 's/^[^-]*//' | sort -u
}

# Names listed under a heading of `hetcast CMD --help` ("algorithms:", "generators ..."):
# the first word of each line indented by two spaces and followed by two spaces.
_hetcast_listed() {
    local heading=$1
    shift
    _hetcast_help "$@" | sed -n "/^$heading/,/^\$/s/^  \\([a-z][-a-z0-9]*\\)  .*/\\1/p"
}

# The config `hetcast` would use: -c/--config on the line, else $HETCAST_CONFIG, else /etc.
_hetcast_config() {
    local i
    for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
        case ${COMP_WORDS[i]} in
            -c | --config) printf '%s\n' "${COMP_WORDS[i + 1]/#\~/$HOME}"; return ;;
            --config=*) printf '%s\n' "${COMP_WORDS[i]#--config=}"; return ;;
        esac
    done
    printf '%s\n' "${HETCAST_CONFIG:-/etc/hetcast/hetcastd.yaml}"
}

# The cluster file the config names (`cluster: PATH`, relative to the config's folder).
_hetcast_cluster_file() {
    local config cluster i
    for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
        if [[ ${COMP_WORDS[i]} == --cluster ]]; then
            cluster=${COMP_WORDS[i + 1]/#\~/$HOME}
            [[ -r $cluster ]] && printf '%s\n' "$cluster"
            return 0
        fi
    done
    config=$(_hetcast_config)
    if [[ ! -r $config ]]; then  # no daemon here: the operator's cluster file
        [[ -n ${HETCAST_CLUSTER:-} && -r $HETCAST_CLUSTER ]] && printf '%s\n' "$HETCAST_CLUSTER"
        return 0
    fi
    cluster=$(sed -n 's/^cluster: *["'\'']\{0,1\}\([^"'\''#]*[^"'\''# ]\).*/\1/p' "$config" 2>/dev/null | head -n 1)
    [[ -n $cluster && $cluster != /* ]] && cluster=$(dirname -- "$config")/$cluster
    [[ -n $cluster && -r $cluster ]] && printf '%s\n' "$cluster"
    return 0
}

# @* and the cluster file's groups: the block under `groups:`, one `  NAME: ...` a line.
_hetcast_groups() {
    local cluster
    cluster=$(_hetcast_cluster_file)
    printf '%s\n' '@*'
    [[ -n $cluster ]] || return 0
    sed -n '/^groups:/,/^[^ #]/s/^  *\([A-Za-z0-9][A-Za-z0-9._-]*\):.*/@\1/p' "$cluster" 2>/dev/null
}

# What a node set may name: the members, and when there are some, @* and the groups.
_hetcast_nodes() {
    local members
    members=$(_hetcast_members)
    [[ -n $members ]] || return 0
    printf '%s\n' "$members"
    _hetcast_groups
}

# Member names, from the daemon, else from the cluster file; cached for 30 s per config.
declare -g _hetcast_members_key="" _hetcast_members_list="" _hetcast_members_time=0
_hetcast_members() {
    local config args=() i names cluster
    config=$(_hetcast_config)
    for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
        case ${COMP_WORDS[i]} in
            -c | --config | --cluster | -i | --identity | --from) args+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]/#\~/$HOME}") ;;
        esac
    done
    if [[ $_hetcast_members_key == "${args[*]}|$config" ]] && ((SECONDS - _hetcast_members_time < 30)); then
        printf '%s\n' "$_hetcast_members_list"
        return
    fi
    names=$(_hetcast_run status --json "${args[@]}" | sed -n 's/^ *"name": *"\([^"\\]*\)".*/\1/p' | sort -u)
    if [[ -z $names ]]; then
        cluster=$(_hetcast_cluster_file)
        if [[ -n $cluster ]]; then
            names=$(grep -oE '(^|[{,[:space:]-])name: *["'\'']?[^"'\'',}[:space:]]+' "$cluster" 2>/dev/null |
                sed 's/.*name: *["'\'']\{0,1\}//' | sort -u)
        fi
    fi
    _hetcast_members_key="${args[*]}|$config"
    _hetcast_members_list=$names
    _hetcast_members_time=$SECONDS
    printf '%s\n' "$names"
}

# _hetcast_reply WORDS CUR: COMPREPLY = the words starting with CUR.
_hetcast_reply() {
    local IFS=$'\n'
    # shellcheck disable=SC2207
    COMPREPLY=($(compgen -W "$1" -- "$2"))
}

_hetcast() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local i cmd="" sub=""
    COMPREPLY=()
    # bash splits "--to a,b" at nothing but spaces; "--opt=value" arrives as three words.
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            -*) ;;
            *)
                if [[ -z $cmd ]]; then
                    cmd=${COMP_WORDS[i]}
                elif [[ -z $sub && ($cmd == map || $cmd == keys) ]]; then
                    [[ ${COMP_WORDS[i - 1]} == -* ]] || sub=${COMP_WORDS[i]}
                fi
                ;;
        esac
    done
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            _hetcast_reply $'--help\n--version' "$cur"
        else
            _hetcast_reply "$(_hetcast_commands)" "$cur"
        fi
        return
    fi
    [[ $cmd == map && $sub == show ]] && cmd="map show"

    case $prev in
        --to | --from | --exclude | -x | -w | --nodes)
            # A node set: complete its last element (after a ',' or an operator).
            local head="" tail=$cur
            if [[ $cur == *[,\!\&^]* ]]; then
                tail=${cur##*[,\!\&^]}
                head=${cur%"$tail"}
            fi
            local members m list=""
            members=$(_hetcast_nodes)
            for m in $members; do list+="$head$m"$'\n'; done
            _hetcast_reply "$list" "$head$tail"
            [[ $prev == --from ]] || compopt -o nospace 2>/dev/null
            return
            ;;
        -a | --algo | --algos)
            local algos
            algos=$(_hetcast_listed 'algorithms:' plan; _hetcast_listed 'pattern algorithms' plan)
            _hetcast_reply "$algos"$'\nall\nauto' "$cur"
            return
            ;;
        -m | --model)
            _hetcast_reply $'blocking\nnonblocking\npostal' "$cur"
            return
            ;;
        -g | --generator)
            _hetcast_reply "$(_hetcast_help sweep | sed -n '/^generators/,/^$/s/^  \([a-z][-a-z]*\)  \[.*/\1/p')" "$cur"
            return
            ;;
        -c | --config | -i | --identity | -n | --network | -p | --pattern | -o | --output | --csv | \
            --summary-csv | --plot | --dir | --dest-root | --state-dir | --cluster | --link-profile)
            return  # files: bash's default completion (complete -o default)
            ;;
    esac
    if [[ $cur == -* ]]; then
        # shellcheck disable=SC2086  # "map show" is two words
        _hetcast_reply "$(_hetcast_options $cmd)" "$cur"
        return
    fi
    case $cmd in
        map) [[ -z $sub ]] && _hetcast_reply show "$cur" ;;
        keys) [[ -z $sub ]] && _hetcast_reply $'init\nissue\nshow' "$cur" ;;
        leave) _hetcast_reply "$(_hetcast_nodes)" "$cur" ;;
    esac
    # Anything else (push FILE...): bash's default completion, files.
}

_hetcastd() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()
    case $prev in
        --listen | --join | --name) return ;;
        --log-level) _hetcast_reply $'trace\ndebug\ninfo\nwarn\nerror' "$cur"; return ;;
        -c | --config | --dest-root | --state-dir | --identity | --cluster | --link-profile) return ;;
    esac
    if [[ $cur == -* ]]; then
        _hetcast_reply "$(_hetcast_options)" "$cur"
    fi
}

complete -o default -F _hetcast hetcast
complete -o default -F _hetcastd hetcastd
