#!/bin/sh
# Sign in as a guest, play a practice table with bots to its end, and read a refusal's
# reason: the web edge in Connect JSON with curl (and python3 to read the JSON).
#
#   sh quickstart.sh http://127.0.0.1:8080
#
# (the web edge's URL, as `make run` prints it). A call is a POST of JSON to
# /president.gateway.v1.GatewayService/<Method>; uint64 fields (versions) are strings,
# and fields at their default (0, "", []) are left out.
set -eu
EDGE="${1:-http://127.0.0.1:8080}"
API="$EDGE/president.gateway.v1.GatewayService"

call() { # call METHOD JSON [TOKEN]: the answer's JSON (an error's too)
  curl -sS -X POST "$API/$1" -H 'content-type: application/json' \
    ${3:+-H "authorization: Bearer $3"} -d "$2"
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

TOKEN=$(call CreateGuest '{"displayName": "Ada"}' | get 'j["credentials"]["accessToken"]')
# A practice table: you and three bots; one round makes a short game.
TABLE=$(call CreateTable '{"options": {"preset": "classic", "options": {"game_end": "rounds:1"}},
  "displayName": "Ada"}' "$TOKEN" | get 'j["tableId"]')
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
  "standings": j["view"]["lastStandings"], "scores": [s.get("score", 0) for s in j["view"]["seats"]]}'
# A refusal: {"code": "not_found", "message": "...", "details": [{"type":
# "google.rpc.ErrorInfo", "value": "<base64>", "debug": {"reason": "TABLE_NOT_FOUND", ...}}]}
call JoinTable '{"tableId": "no-such-table", "displayName": "Ada"}' "$TOKEN" |
  get '{"code": j["code"], "reason": [d["debug"]["reason"] for d in j["details"]
    if d["type"] == "google.rpc.ErrorInfo"][0]}'
