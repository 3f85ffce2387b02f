# Sourced by scripts/setup.sh and scripts/test.sh: install_packages PKG... installs the Debian
# packages that are not installed yet, and nothing when all are, so both commands stay cheap to
# run again. apt-get update runs at most once per command, even when both scripts install.

install_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  ((${#missing[@]} > 0)) || return 0
  echo "installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  if [ -z "${PAGEDSERVE_APT_UPDATED:-}" ]; then
    $sudo apt-get update -qq
    export PAGEDSERVE_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
}

# "1 min 23 s" since the given epoch second, for the scripts' closing line.
elapsed_since() {
  local s=$(($(date +%s) - $1))
  if ((s >= 60)); then echo "$((s / 60)) min $((s % 60)) s"; else echo "$s s"; fi
}
