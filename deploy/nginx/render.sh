#!/usr/bin/env bash
# Writes the nginx config for pagedserve replicas (deploy/nginx/pagedserve.conf.template) to
# stdout.
#   deploy/nginx/render.sh --prefix DIR --listen HOST:PORT [--balance least_conn|session]
#                          --upstream HOST:PORT [--upstream HOST:PORT ...]
# DIR must exist; nginx writes its pid, logs and temp files there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix="" listen="" balance=least_conn
upstreams=()
while (($#)); do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --listen) listen=$2; shift 2 ;;
    --balance) balance=$2; shift 2 ;;
    --upstream) upstreams+=("$2"); shift 2 ;;
    *) echo "render.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$prefix" && -d "$prefix" ]] || { echo "render.sh: --prefix DIR (an existing directory) is required" >&2; exit 2; }
[[ "$listen" =~ ^[^:]+:[0-9]+$ ]] || { echo "render.sh: --listen HOST:PORT is required" >&2; exit 2; }
((${#upstreams[@]} > 0)) || { echo "render.sh: at least one --upstream HOST:PORT is required" >&2; exit 2; }
case "$balance" in
  least_conn) balance_line="least_conn;" ;;
  session) balance_line='hash $pagedserve_affinity_key consistent;' ;;
  *) echo "render.sh: --balance must be least_conn or session, got '$balance'" >&2; exit 2 ;;
esac
servers=""
for u in "${upstreams[@]}"; do
  [[ "$u" =~ ^[^:]+:[0-9]+$ ]] || { echo "render.sh: --upstream '$u' is not HOST:PORT" >&2; exit 2; }
  # One failure (refused connection, 502/503) takes a replica out of the rotation for 2 s.
  servers+="    server $u max_fails=1 fail_timeout=2s;"$'\n'
done
servers=${servers%$'\n'}
conf=$(<"$here/pagedserve.conf.template")
conf=${conf//@PREFIX@/$(cd "$prefix" && pwd)}
conf=${conf//@LISTEN@/$listen}
conf=${conf//@BALANCE@/$balance_line}
conf=${conf//@SERVERS@/$servers}
printf '%s\n' "$conf"
