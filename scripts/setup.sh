#!/usr/bin/env bash
# Installs what browserop's demo and tests need on a Debian/Ubuntu machine:
# Chromium (for the browser tests and the demo), a C compiler (for the
# SQLite driver) and systemd's systemd-analyze (for the service unit test).
# Go itself must already be on PATH.
set -euo pipefail

need_apt=()
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
   && ! command -v google-chrome >/dev/null 2>&1 && ! command -v google-chrome-stable >/dev/null 2>&1; then
  need_apt+=(chromium)
fi
# systemd-analyze checks the unit `browserop service install` writes.
command -v systemd-analyze >/dev/null 2>&1 || need_apt+=(systemd)
if [ ${#need_apt[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing ${need_apt[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
go version >/dev/null || { echo "setup: Go 1.26 or newer must be on PATH" >&2; exit 1; }
