#!/usr/bin/env bash
# Build a Redis server of a given minor series (default 8.6) from Debian's source package and
# cache it under .cache/redis-<version>/ (only src/redis-server and src/redis-cli are kept).
# Debian's binary packages of Redis 8 need a newer glibc than bookworm's, but the source
# package builds here with its bundled dependencies (about 3 minutes on 2 cores). The apt
# configuration is private to this script: the machine's sources and lists are left alone.
#
#   tools/build-redis.sh [SERIES]   prints the directory holding redis-server and redis-cli
set -euo pipefail
series=${1:-8.6}
top=$(cd "$(dirname "$0")/.." && pwd)
cache=$top/.cache
mkdir -p "$cache"

# Already built? The newest cached build of the series answers without any network.
for dir in $(ls -d "$cache"/redis-"$series".* 2>/dev/null | sort -V -r); do
  if [ -x "$dir/redis-server" ] && "$dir/redis-server" --version >/dev/null 2>&1; then
    echo "$dir"
    exit 0
  fi
done

work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial"
printf 'deb-src http://deb.debian.org/debian experimental main\ndeb-src http://deb.debian.org/debian unstable main\n' \
  >"$work/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=/dev/null
  -o "Dir::State::Lists=$work/lists" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -qq >&2
# The newest source version of the series (epoch 5 in Debian: "5:8.6.3-1").
version=$(apt-cache "${apt_opts[@]}" showsrc redis 2>/dev/null |
  sed -n 's/^Version: //p' | grep -E "^([0-9]+:)?${series//./\\.}\." | sort -V -r | head -n 1)
if [ -z "$version" ]; then
  echo "build-redis: no Redis $series source package in Debian experimental or unstable" >&2
  exit 1
fi
upstream=${version#*:}
upstream=${upstream%-*}
(cd "$work" && apt-get "${apt_opts[@]}" source --download-only -qq "redis=$version" >&2)
tar -xzf "$work"/redis_"$upstream".orig.tar.* -C "$work"
echo "build-redis: building Redis $upstream (about 3 minutes on 2 cores)" >&2
make -C "$work/redis-$upstream" -j"$(nproc)" BUILD_TLS=no MALLOC=libc >"$work/build.log" 2>&1 || {
  tail -n 30 "$work/build.log" >&2
  exit 1
}
dest=$cache/redis-$upstream
rm -rf "$dest"
mkdir -p "$dest.tmp"
cp "$work/redis-$upstream/src/redis-server" "$work/redis-$upstream/src/redis-cli" "$dest.tmp/"
mv "$dest.tmp" "$dest"
echo "$dest"
