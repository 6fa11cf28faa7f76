#!/usr/bin/env bash
# Installs what browserop's demo and tests need on a Debian/Ubuntu machine:
# Chromium (for the browser tests and the demo), a C compiler (for the
# SQLite driver), systemd's systemd-analyze (for the service unit test) and
# a WordPress with MariaDB and PHP (for internal/testrig/wpsite, the real WordPress
# the tests run; it starts its own servers, never the system's).
# Go itself must already be on PATH.
set -euo pipefail

case "${1:-}" in
  ""|--tests) ;;
  *) echo "setup: unknown argument ${1}: use no argument (the demo) or --tests" >&2; exit 2 ;;
esac

need_apt=()
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
   && ! command -v google-chrome >/dev/null 2>&1 && ! command -v google-chrome-stable >/dev/null 2>&1; then
  need_apt+=(chromium)
fi
# systemd-analyze checks the unit `browserop service install` writes.
command -v systemd-analyze >/dev/null 2>&1 || need_apt+=(systemd)
# internal/testrig/wpsite: WordPress 6.1 and its themes from Debian, MariaDB, PHP with
# mysqli. Without their recommendations (more servers and translations).
# The tests (scripts/setup.sh --tests) also need a real WordPress: its
# Debian packages, MariaDB and PHP. The demo does not.
need_wp=()
if [ "${1:-}" = "--tests" ]; then
[ -f /usr/share/wordpress/wp-settings.php ] || need_wp+=(wordpress)
[ -f /usr/share/wordpress/wp-content/themes/twentytwentythree/theme.json ] \
  || need_wp+=(wordpress-theme-twentytwentythree)
# A classic theme beside the block theme: the bundled adapter is proven on
# both (operator/wordpress_tt1_test.go).
[ -f /usr/share/wordpress/wp-content/themes/twentytwentyone/style.css ] \
  || need_wp+=(wordpress-theme-twentytwentyone)
{ command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; } || need_wp+=(mariadb-server)
command -v php >/dev/null 2>&1 || need_wp+=(php-cli)
{ command -v php >/dev/null 2>&1 && php -r 'exit(extension_loaded("mysqli") ? 0 : 1);'; } || need_wp+=(php-mysql)
# internal/testrig/mwsite: MediaWiki 1.39 from Debian, on SQLite. The
# package is content with php-mysql for its database; the test site needs
# PHP's SQLite driver, and intl, mbstring and the DOM, named here too.
[ -f /usr/share/mediawiki/maintenance/install.php ] || need_wp+=(mediawiki)
{ command -v php >/dev/null 2>&1 && php -r 'exit(extension_loaded("pdo_sqlite") ? 0 : 1);'; } || need_wp+=(php-sqlite3)
{ command -v php >/dev/null 2>&1 && php -r 'exit(extension_loaded("intl") ? 0 : 1);'; } || need_wp+=(php-intl)
{ command -v php >/dev/null 2>&1 && php -r 'exit(extension_loaded("mbstring") ? 0 : 1);'; } || need_wp+=(php-mbstring)
{ command -v php >/dev/null 2>&1 && php -r 'exit(extension_loaded("dom") && extension_loaded("xml") ? 0 : 1);'; } || need_wp+=(php-xml)
fi
if [ ${#need_apt[@]} -gt 0 ] || [ ${#need_wp[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing ${need_apt[*]} ${need_wp[*]}" >&2
  # No package may start its service (mariadb, or apache2, which wordpress
  # depends on): tests start their own servers. policy-rc.d says so to
  # invoke-rc.d, unless the machine already has one (containers do).
  policy=/usr/sbin/policy-rc.d
  if [ ${#need_wp[@]} -gt 0 ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# scripts/setup.sh: no service starts while it installs packages\nexit 101\n' \
      | $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
    trap '$sudo rm -f "$policy"' EXIT
  fi
  $sudo apt-get update -qq
  if [ ${#need_apt[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
  fi
  if [ ${#need_wp[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_wp[@]}" >/dev/null
  fi
fi
go version >/dev/null || { echo "setup: Go 1.26 or newer must be on PATH" >&2; exit 1; }
