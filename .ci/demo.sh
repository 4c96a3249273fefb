#!/usr/bin/env bash
# The demo: a throw-away vault with a demo password, a patient and entries, listed and checked.
# Nothing here touches your own vault.
set -euo pipefail
hreader=${1:-.build/debug/hreader}
sample_server="$(dirname "$hreader")/hreader-sample-server"
examples="$(cd "$(dirname "$0")/.." && pwd)/docs/examples"
work=$(mktemp -d "${TMPDIR:-/tmp}/hreader-demo.XXXXXX")
export HREADER_VAULT="$work/vault"
unset HREADER_SESSION HREADER_PASSWORD
umask 077
# The demo password lives in a file (never on the command line).
printf 'Demo-Passw0rd\n' > "$work/password"

if [ -t 1 ]; then bold=$'\033[1m'; plain=$'\033[0m'; else bold=; plain=; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; }

step hreader init --new-password-file "$work/password"
"$hreader" init --new-password-file "$work/password"

step 'eval "$(hreader unlock --password-file … --for 10m)"'
eval "$("$hreader" unlock --password-file "$work/password" --for 10m)"

step hreader patients add --first Ada --last Lovelace --birth-date 1985-12-10 --gender female --as me
"$hreader" patients add --first Ada --last Lovelace --birth-date 1985-12-10 --gender female --as me
step hreader patients add --first Charles --last Lovelace --birth-date 2015-06-01 --gender male --as child
"$hreader" patients add --first Charles --last Lovelace --birth-date 2015-06-01 --gender male --as child
step hreader patients select 1
"$hreader" patients select 1

step hreader entries add --type vital_sign --description "Systolic blood pressure" --value 118 --unit mm[Hg] …
"$hreader" entries add --type vital_sign --description "Systolic blood pressure" --value 118 --unit 'mm[Hg]' \
  --date 2026-11-01T08:30:00Z --code LOINC=8480-6
"$hreader" entries add --type vital_sign --description "Diastolic blood pressure" --value 76 --unit 'mm[Hg]' \
  --date 2026-11-01T08:30:00Z --code LOINC=8462-4
"$hreader" entries add --type medication --description "Lisinopril 10 mg tablet" --dose "10 mg daily" --date 2026-10-15
"$hreader" entries add --type condition --description "Essential hypertension" --status active --date 2026-10-15 \
  --code SNOMED-CT=59621000
step hreader entries comment 3 --text "Take in the morning" --prescriber "Dr. Babbage"
"$hreader" entries comment 3 --text "Take in the morning" --prescriber "Dr. Babbage"

step hreader import --file docs/examples/rhex-record.json --as spouse    "# an RHEx c32 record, as hReader's servers sent them"
"$hreader" import --file "$examples/rhex-record.json" --as spouse
step hreader import --file docs/examples/fhir-bundle.json --as child     "# a FHIR R4 Bundle"
"$hreader" import --file "$examples/fhir-bundle.json" --as child

# The sample server: a FHIR R4 and an RHEx server over invented patients, on 127.0.0.1 only.
printf 'demo-refresh-token-%s\n' "$RANDOM$RANDOM" > "$work/refresh-token"
"$sample_server" --port 0 --require-auth --refresh-token-file "$work/refresh-token" > "$work/server.out" 2> "$work/server.err" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q '^listening ' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
server=$(sed -n 's/^listening //p' "$work/server.out")
[ -n "$server" ] || { echo "demo: the sample server did not start: $(cat "$work/server.err")" >&2; exit 1; }
printf '\n(sample server listening at %s)\n' "$server"

step hreader remote patients --server "$server/fhir"
"$hreader" remote patients --server "$server/fhir"
step hreader import --server "$server/fhir" --all --as family
"$hreader" import --server "$server/fhir" --all --as family
step hreader sources login --server "$server/rhex" --kind rhex --auth oauth2 --token-url "$server/oauth/token" --refresh-token-file …
"$hreader" sources login --server "$server/rhex" --kind rhex --auth oauth2 --token-url "$server/oauth/token" \
  --client-id hreader-demo --refresh-token-file "$work/refresh-token"
step hreader import --server "$server/rhex" --all --as other
"$hreader" import --server "$server/rhex" --all --as other
step hreader sync
"$hreader" sync
step hreader sources list
"$hreader" sources list

step hreader patients list
"$hreader" patients list
step hreader entries list
"$hreader" entries list
step hreader timeline add --patient 3 --key Levels pain=2 energy=7 --at 2025-12-30T09:00:00Z
"$hreader" timeline add --patient 3 --key Levels pain=2 energy=7 --at 2025-12-30T09:00:00Z
step hreader timeline --patient 3 --page year --at 2025-12-31T00:00:00Z --types vitals,results,levels --pretty
"$hreader" timeline --patient 3 --page year --at 2025-12-31T00:00:00Z --types vitals,results,levels --pretty

step hreader applets add --patient 3 org.mitre.hreader.bmi
"$hreader" applets add --patient 3 org.mitre.hreader.bmi
step hreader summary --patient 3
"$hreader" summary --patient 3

step hreader status
"$hreader" status
step hreader check
"$hreader" check
step hreader lock
"$hreader" lock
kill "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
trap - EXIT
rm -f "$work/refresh-token"

printf '\nThe demo vault is at %s (password in %s).\n' "$HREADER_VAULT" "$work/password"
printf 'Try: HREADER_VAULT=%s %s patients list --password-file %s\n' "$HREADER_VAULT" "$hreader" "$work/password"
