#!/usr/bin/env bash
# Installs Debian's (or Ubuntu's) Chromium when it is missing: the playground's browser tests
# (PlaygroundBrowserTest) drive it headless with playwright-core. Does nothing when `chromium`
# is on the PATH or CHROMIUM_PATH names a browser. Needs root or sudo.
set -euo pipefail
if [ -n "${CHROMIUM_PATH:-}" ] && [ -x "${CHROMIUM_PATH}" ]; then
  exit 0
fi
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: no apt-get here; install Chromium yourself and set CHROMIUM_PATH to its binary" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "install-chromium: installing the chromium package (for the playground's browser tests)"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
chromium --version
