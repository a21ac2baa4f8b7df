#!/usr/bin/env bash
# Fetches the servers of the test matrix (make test-servers) from Debian's packages, without
# installing anything on the system:
#
#   valkey8     Valkey 8.0 (bookworm-backports valkey-tools)
#   redis8      Redis 8.0  (trixie redis-tools)
#   valkey8.1   Valkey 8.1 (trixie valkey-tools)
#   redis8.6    Redis 8.6  (experimental redis-tools, its libraries from sid)
#   valkey9.1   Valkey 9.1 (sid valkey-tools)
#
# Each server's package and the libraries it links against (libc6 and its loader included,
# from the same suite, or from sid for experimental) are fetched with `apt-get download`
# through a private apt configuration (its own sources, lists and cache under the servers
# folder: the system's apt state is neither read for sources nor changed), unpacked with
# `dpkg -x` into SERVERS_DIR/NAME/root, and started through that folder's own loader by the
# wrappers SERVERS_DIR/NAME/bin/redis-server and bin/redis-cli:
#
#   root/.../ld-linux-x86-64.so.2 --library-path root/... --argv0 redis-server root/usr/bin/...
#
# (--argv0 because the Debian server binary is *-check-rdb, which serves when called
# redis-server.) internal/redistest starts them with STREAMQ_REDIS_SERVER=NAME.
#
# Usage: scripts/servers.sh [NAME...]   (no NAME: all five). Idempotent: a server already
# fetched is checked (its --version) and kept, with no network access.
# SERVERS_DIR defaults to STREAMQ_SERVERS_DIR, else .servers/ in the repository (gitignored).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
SERVERS_DIR=${STREAMQ_SERVERS_DIR:-$repo/.servers}
ALL_SERVERS="valkey8 redis8 valkey8.1 redis8.6 valkey9.1"
MIRROR=${STREAMQ_DEBIAN_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# spec NAME sets suite (of the server package), libsuite (of its libraries), pkg, version
# (upstream, checked against the binary's --version: a pattern, 9.1.*, where the suite moves
# on: sid and experimental keep only their newest build), prog (binary prefix) and libs
# (packages of the libraries it links; on sid libsystemd0 no longer needs libcap2).
spec() {
  case $1 in
  valkey8)
    suite=bookworm-backports libsuite=bookworm pkg=valkey-tools version=8.0.1 prog=valkey
    libs="libc6 libatomic1 libjemalloc2 liblzf1 libssl3 libstdc++6 libgcc-s1 libsystemd0 libcap2 libgcrypt20 libgpg-error0 liblz4-1 liblzma5 libzstd1"
    ;;
  redis8)
    suite=trixie libsuite=trixie pkg=redis-tools version=8.0.2 prog=redis
    libs="libc6 libatomic1 libjemalloc2 liblzf1 libssl3t64 libsystemd0 libcap2 libstdc++6 libgcc-s1 zlib1g libzstd1"
    ;;
  valkey8.1)
    suite=trixie libsuite=trixie pkg=valkey-tools version=8.1.1 prog=valkey
    libs="libc6 libatomic1 libjemalloc2 liblzf1 libssl3t64 libstdc++6 libgcc-s1 libsystemd0 libcap2 zlib1g libzstd1"
    ;;
  redis8.6)
    suite=experimental libsuite=sid pkg=redis-tools version="8.6.*" prog=redis
    libs="libc6 libatomic1 libjemalloc2 liblzf1 libssl3t64 libsystemd0 libstdc++6 libgcc-s1 zlib1g libzstd1"
    ;;
  valkey9.1)
    suite=sid libsuite=sid pkg=valkey-tools version="9.1.*" prog=valkey
    libs="libc6 libatomic1 libjemalloc2 liblzf1 libssl3t64 libstdc++6 libgcc-s1 libsystemd0 zlib1g libzstd1"
    ;;
  *)
    echo "servers.sh: unknown server '$1' (known: $ALL_SERVERS)" >&2
    return 1
    ;;
  esac
}

apt_dir=$SERVERS_DIR/.apt

# apt_setup writes the private apt configuration: Debian's bookworm, bookworm-backports,
# trixie, sid and experimental, Packages indexes only, no system apt.conf.d or sources.list.d.
# sid's and experimental's Release files are valid for a week only: a mirror that lags behind
# serves them expired, so their dates are not checked (their signatures still are).
apt_setup() {
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/empty"
  local s
  : >"$apt_dir/sources.list"
  for s in bookworm bookworm-backports trixie; do
    echo "deb [signed-by=$KEYRING target=Packages] $MIRROR $s main" >>"$apt_dir/sources.list"
  done
  for s in sid experimental; do
    echo "deb [signed-by=$KEYRING target=Packages check-valid-until=no] $MIRROR $s main" >>"$apt_dir/sources.list"
  done
  cat >"$apt_dir/apt.conf" <<EOF
Dir::Etc::main "/dev/null";
Dir::Etc::parts "$apt_dir/empty";
Dir::Etc::sourcelist "$apt_dir/sources.list";
Dir::Etc::sourceparts "$apt_dir/empty";
Dir::Etc::preferences "/dev/null";
Dir::Etc::preferencesparts "$apt_dir/empty";
Dir::State::Lists "$apt_dir/lists";
Dir::Cache "$apt_dir/cache";
APT::Sandbox::User "root";
Acquire::Languages "none";
EOF
}

papt() { APT_CONFIG=$apt_dir/apt.conf "$@"; }

# apt_update fetches the private lists (once; again when a download fails on stale lists).
apt_update() {
  echo "servers.sh: apt-get update (private lists in $apt_dir)"
  papt apt-get -qq update
  touch "$apt_dir/updated"
}

# download NAME DIR: the server package and its libraries, as .deb files into DIR.
download() {
  local want=("$pkg/$suite")
  local l
  for l in $libs; do want+=("$l/$libsuite"); done
  (cd "$2" && papt apt-get -qq download "${want[@]}")
}

# unpack DIR ROOT: dpkg -x every .deb of DIR into ROOT.
unpack() {
  local deb
  for deb in "$1"/*.deb; do dpkg -x "$deb" "$2"; done
}

# write_wrappers NAME: bin/redis-server and bin/redis-cli, each exec'ing the unpacked binary
# through the unpacked loader, found relative to the wrapper so the folder may move.
write_wrappers() {
  local d=$SERVERS_DIR/$1 ld libpath
  ld=$(cd "$d/root" && find . -name 'ld-linux-x86-64.so.2' -type f | head -n1)
  [ -n "$ld" ] || { echo "servers.sh: $1: no ld-linux-x86-64.so.2 in the unpacked libc6" >&2; return 1; }
  libpath='$r/lib/x86_64-linux-gnu:$r/usr/lib/x86_64-linux-gnu'
  mkdir -p "$d/bin"
  wrapper "$1" "$ld" "$libpath" redis-server "usr/bin/$prog-check-rdb" >"$d/bin/redis-server"
  wrapper "$1" "$ld" "$libpath" redis-cli "usr/bin/$prog-cli" >"$d/bin/redis-cli"
  chmod 755 "$d/bin/redis-server" "$d/bin/redis-cli"
}

# wrapper NAME LOADER LIBPATH ARGV0 BINARY prints one wrapper script.
wrapper() {
  cat <<EOF
#!/bin/sh
# $4 of $1 ($pkg $(cat "$SERVERS_DIR/$1/package-version") from Debian $suite), run
# through the folder's own loader and libraries. Generated by scripts/servers.sh.
r=\$(cd "\$(dirname "\$0")/../root" && pwd)
exec "\$r/${2#./}" --library-path "$3" --argv0 $4 "\$r/$5" "\$@"
EOF
}

# check NAME: every library resolves inside the folder, and the server is the version wanted.
check() {
  local d=$SERVERS_DIR/$1 out r
  r=$(cd "$d/root" && pwd)
  out=$("$d/bin/redis-server" --version 2>&1) || { echo "servers.sh: $1: $out" >&2; return 1; }
  # shellcheck disable=SC2254 # $version may be a pattern
  case $out in
  *"v="$version" "*) ;;
  *) echo "servers.sh: $1: want version $version, got: $out" >&2; return 1 ;;
  esac
  local ld
  ld=$(sed -n 's|^exec "\$r/\([^"]*\)".*|\1|p' "$d/bin/redis-server")
  if "$r/$ld" --library-path "$r/lib/x86_64-linux-gnu:$r/usr/lib/x86_64-linux-gnu" --list \
    "$r/usr/bin/$prog-check-rdb" | grep '=>' | grep -v "=> $r/" >&2; then
    echo "servers.sh: $1: the libraries above resolve outside $d/root" >&2
    return 1
  fi
  "$d/bin/redis-cli" --version >/dev/null
  echo "$out"
}

# fetch NAME: download, unpack and check NAME unless a checked copy is there already.
fetch() {
  spec "$1"
  local d=$SERVERS_DIR/$1
  if [ -f "$d/ok" ] && out=$(check "$1" 2>/dev/null); then
    echo "$1: $out (in $d, already fetched)"
    return 0
  fi
  rm -rf "$d"
  mkdir -p "$d/debs" "$d/root"
  [ -f "$apt_dir/updated" ] || apt_update
  if ! download "$1" "$d/debs" 2>/dev/null; then
    apt_update
    download "$1" "$d/debs"
  fi
  unpack "$d/debs" "$d/root"
  dpkg-deb -f "$d/debs/${pkg}_"*.deb Version >"$d/package-version"
  rm -rf "$d/debs"
  write_wrappers "$1"
  out=$(check "$1")
  touch "$d/ok"
  echo "$1: $out (fetched into $d)"
}

main() {
  local names=("$@")
  [ ${#names[@]} -gt 0 ] || read -r -a names <<<"$ALL_SERVERS"
  local n
  for n in "${names[@]}"; do spec "$n"; done
  apt_setup
  for n in "${names[@]}"; do fetch "$n"; done
}

main "$@"
