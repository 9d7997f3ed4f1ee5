#!/usr/bin/env bash
# Every command's --help against its page (issue 29): for each command of the table that
# `attnspec --help` lists,
#   * docs/cli/<command>.md exists;
#   * every flag (--xxx) that `attnspec <command> --help` prints appears on that page (as a whole
#     flag: --out does not count for --outside);
#   * the help is the short form: each option on one line, exactly two examples, the line
#     "full documentation: docs/cli/<command>.md", and no machine timings (~2 s, 5 min, 0.3 GB).
# Exit 0 when every command passes, 1 otherwise (one line per problem).
#
# --self-test: proves the check can fail. On a copy of the pages it removes, for each command,
# one flag its --help prints (every occurrence) and expects the check to fail naming that flag;
# then it removes one page and expects the check to fail naming it. Exit 0 when every planted
# defect was caught.
#
# usage: tests/cli/help_pages.sh [--self-test] ATTNSPEC DOCS_CLI_DIR [COMMAND...]
#        (ctest: cli.help_pages and cli.help_pages_self_test; without COMMAND, every command)
set -uo pipefail
self_test=0
if [ "${1:-}" = --self-test ]; then
    self_test=1
    shift
fi
if [ $# -lt 2 ]; then
    echo "usage: $0 [--self-test] ATTNSPEC DOCS_CLI_DIR [COMMAND...]" >&2
    exit 64
fi
bin=$1
pages=$2
shift 2
[ -x "$bin" ] || { echo "help_pages: no executable $bin" >&2; exit 66; }
[ -d "$pages" ] || { echo "help_pages: no directory $pages" >&2; exit 66; }

# The commands of the table: the lines "  <name>  <summary>" after "commands:" in the top help.
commands=("$@")
if [ ${#commands[@]} -eq 0 ]; then
    mapfile -t commands < <("$bin" --help | sed -n '/^commands:/,/^$/p' |
        sed -n 's/^  \([a-z][a-z0-9-]*\) .*/\1/p')
fi
if [ ${#commands[@]} -eq 0 ]; then
    echo "help_pages: no command found in '$bin --help'"
    exit 1
fi

# The flags a text names, one per line, sorted.
flags_of() { grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }
# Whether file $2 names flag $1 as a whole flag.
names_flag() { grep -qE -- "(^|[^a-zA-Z0-9-])$1([^a-zA-Z0-9-]|\$)" "$2"; }

# check DIR CMD...: prints one line per problem; returns 1 when there is one.
check() {
    local dir=$1 cmd help page flag bad=0
    shift
    for cmd in "$@"; do
        page="$dir/$cmd.md"
        if ! help=$("$bin" "$cmd" --help 2>&1); then
            echo "$cmd: 'attnspec $cmd --help' failed"
            bad=1
            continue
        fi
        if [ ! -f "$page" ]; then
            echo "$cmd: no page $page"
            bad=1
            continue
        fi
        while IFS= read -r flag; do
            if ! names_flag "$flag" "$page"; then
                echo "$cmd: $flag is in 'attnspec $cmd --help' but not on $page"
                bad=1
            fi
        done < <(printf '%s\n' "$help" | flags_of)
        # Short form: options one per line (every line of the block starts an option).
        local continued
        continued=$(printf '%s\n' "$help" | sed -n '/^options:/,/^$/p' | sed '1d;/^$/d' |
            grep -v '^  -' || true)
        if [ -n "$continued" ]; then
            echo "$cmd: an option's description takes more than one line: '$(head -1 <<<"$continued")'"
            bad=1
        fi
        local examples
        examples=$(printf '%s\n' "$help" | sed -n '/^examples:/,/^$/p' | grep -c '^  [^ ]' || true)
        if [ "$examples" -ne 2 ]; then
            echo "$cmd: --help shows $examples examples, not 2"
            bad=1
        fi
        if ! grep -qxF "full documentation: docs/cli/$cmd.md" <<<"$help"; then
            echo "$cmd: --help does not point to docs/cli/$cmd.md"
            bad=1
        fi
        local timing
        timing=$(grep -E '~ ?[0-9]|[0-9] ?(s|ms|min|GB|MB)([^a-zA-Z]|$)' <<<"$help" || true)
        if [ -n "$timing" ]; then
            echo "$cmd: --help states a machine timing: '$(head -1 <<<"$timing")'"
            bad=1
        fi
    done
    return $bad
}

if [ "$self_test" = 0 ]; then
    if check "$pages" "${commands[@]}"; then
        echo "help_pages: ok (${#commands[@]} commands: ${commands[*]})"
        exit 0
    fi
    echo "help_pages: FAILED (docs/cli/<command>.md must name every flag of its --help)"
    exit 1
fi

# --self-test
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
if ! out=$(check "$pages" "${commands[@]}"); then
    echo "self-test: the pages fail before any defect is planted:"
    echo "$out"
    exit 1
fi
for cmd in "${commands[@]}"; do
    rm -rf "$tmp/pages"
    cp -r "$pages" "$tmp/pages"
    flag=$("$bin" "$cmd" --help | flags_of | grep -vx -- '--help' | head -1)
    if [ -z "$flag" ]; then
        echo "self-test: $cmd: its --help names no flag but --help"
        status=1
        continue
    fi
    sed -i -E "s/(^|[^a-zA-Z0-9-])$flag([^a-zA-Z0-9-]|\$)/\1REMOVED\2/g" "$tmp/pages/$cmd.md"
    if names_flag "$flag" "$tmp/pages/$cmd.md"; then
        echo "self-test: $cmd: could not remove $flag from the copy of its page"
        status=1
    elif out=$(check "$tmp/pages" "$cmd"); then
        echo "self-test: $cmd: $flag removed from its page, and the check still passed"
        status=1
    elif ! grep -qF -- "$cmd: $flag is in" <<<"$out"; then
        echo "self-test: $cmd: $flag removed, but the check did not name it: $out"
        status=1
    else
        echo "self-test: $cmd: $flag removed from its page -> caught"
    fi
done
rm -rf "$tmp/pages"
cp -r "$pages" "$tmp/pages"
rm "$tmp/pages/${commands[0]}.md"
if out=$(check "$tmp/pages" "${commands[0]}") || ! grep -qF "no page" <<<"$out"; then
    echo "self-test: ${commands[0]}: page removed, and the check did not say so"
    status=1
else
    echo "self-test: ${commands[0]}: page removed -> caught"
fi
[ "$status" = 0 ] && echo "help_pages self-test: ok (every planted defect caught)"
exit $status
