#!/bin/sh
# Sign in as a guest, create a practice table with bots, read it, and read a refusal's
# reason: the web edge in Connect JSON with curl (and jq to pick fields).
#
#   sh quickstart.sh http://127.0.0.1:8080
#
# (the web edge's URL, as `make run` prints it). A call is a POST of JSON to
# /president.gateway.v1.GatewayService/<Method>; uint64 fields (versions) are strings.
set -eu
EDGE="${1:-http://127.0.0.1:8080}"
API="$EDGE/president.gateway.v1.GatewayService"

call() { # call METHOD JSON [TOKEN]: the answer's JSON (an error's too)
  curl -sS -X POST "$API/$1" -H 'content-type: application/json' \
    ${3:+-H "authorization: Bearer $3"} -d "$2"
}

TOKEN=$(call CreateGuest '{"displayName": "Ada"}' | jq -r .credentials.accessToken)
TABLE=$(call CreateTable '{"options": {"preset": "classic"}, "displayName": "Ada"}' "$TOKEN" | jq -r .tableId)
call GetTable "{\"tableId\": \"$TABLE\"}" "$TOKEN" | jq -c '{phase: .view.phase, seats: (.view.seats | length), version: .view.version}'
# A refusal: {"code": "not_found", "message": "...", "details": [{"type":
# "google.rpc.ErrorInfo", "value": "<base64>", "debug": {"reason": "TABLE_NOT_FOUND", ...}}]}
call JoinTable '{"tableId": "no-such-table", "displayName": "Ada"}' "$TOKEN" |
  jq -c '{code, reason: (.details[] | select(.type == "google.rpc.ErrorInfo") | .debug.reason)}'
