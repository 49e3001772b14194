#!/usr/bin/env bash
# What the test suite needs from the machine, installed when missing: Debian's redis-server
# (7.0), redis-tools, redis-sentinel, Valkey 8 (bookworm-backports), Prometheus (promtool),
# tmux, zsh, fish, chromium, openssl, Java 17, jq (docs/trace.md's examples), and Redis 8.6
# built from Debian's source package (tools/build-redis.sh, cached in .cache/). `make test`
# and `.ci/run` both run it, so a newcomer's run and CI's have the same tools and skip
# nothing. Uses sudo when not root.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
need=()
have() { command -v "$1" >/dev/null 2>&1; }
have redis-server || need+=(redis-server)
have redis-cli || need+=(redis-tools)
have redis-sentinel || need+=(redis-sentinel)
have make || need+=(make)
have tmux || need+=(tmux)
have jq || need+=(jq)
have openssl || need+=(openssl)
have zsh || need+=(zsh)
have fish || need+=(fish)
have chromium || need+=(chromium)
have java || need+=(openjdk-17-jre-headless)
have promtool || need+=(prometheus)
# Building Redis 8.6: a C toolchain and apt's source download (dpkg-dev for dpkg-source).
have gcc || need+=(gcc)
have dpkg-source || need+=(dpkg-dev)
# Valkey 8: in Debian 12 (bookworm) it comes from bookworm-backports.
valkey_from=()
if ! have valkey-server; then
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  if [ "$codename" = bookworm ]; then
    if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
      echo 'deb http://deb.debian.org/debian bookworm-backports main' |
        $SUDO tee /etc/apt/sources.list.d/backports.list >/dev/null
    fi
    valkey_from=(-t bookworm-backports)
  fi
  need+=(valkey-server)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "install-tools: apt-get install ${need[*]}" >&2
  $SUDO apt-get update -qq
  others=()
  for pkg in "${need[@]}"; do [ "$pkg" = valkey-server ] || others+=("$pkg"); done
  if [ ${#others[@]} -gt 0 ]; then
    $SUDO apt-get install -y -qq --no-install-recommends "${others[@]}" >/dev/null
  fi
  if ! have valkey-server; then
    $SUDO apt-get install -y -qq --no-install-recommends "${valkey_from[@]}" valkey-server >/dev/null
  fi
  # Services the packages' postinst started are not used (the tests start their own on free
  # ports): stop them so nothing listens on the default ports during a run.
  for svc in redis-server redis-sentinel valkey-server prometheus prometheus-node-exporter; do
    $SUDO service "$svc" stop >/dev/null 2>&1 || true
  done
fi
tools/build-redis.sh 8.6 >/dev/null
