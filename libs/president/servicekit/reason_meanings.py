"""What each stable reason means, and whether a client retries: the one hand-kept table.

:mod:`president.servicekit.reasons` finds the reasons in the code and writes
``docs/errors.md`` from them and this table; a test checks the table names each reason
the code gives, and no other, and that a reason whose refusal carries a retry hint is
marked :data:`HINT` here (and only such a reason).
"""

from __future__ import annotations

from typing import Literal

#: Do not send the same call again: fix it, or wait for the state to change.
NO: Literal["no"] = "no"
#: Send it again after the delay the refusal carries (RetryInfo, ``retry_after_seconds``).
HINT: Literal["hint"] = "hint"
#: Whether to retry: :data:`NO`, :data:`HINT`, or after this many seconds.
Retry = Literal["no", "hint"] | int

#: Each reason: what it means, in a sentence, and whether to retry.
MEANINGS: dict[str, tuple[str, Retry]] = {
    # Seats, tables and the table service.
    "ALREADY_HOST": ("The host hands the role to the player who holds it already.", NO),
    "ALREADY_LEFT": ("The seat's player has left the table already.", NO),
    "ALREADY_SEATED": ("The player sits at this table already.", NO),
    "AUDIENCE_REPLICA": (
        "This gateway replica serves spectators only: sit, play and open sessions at the "
        "players' gateway.",
        NO,
    ),
    "BAD_DEAL": ("The dealer sent a deal the rules cannot use (a server fault).", 5),
    "CANNOT_MUTE": ("The host mutes a seat where no person sits, or their own.", NO),
    "CHAT_RATE": ("The seat sent more chat messages than its rate allows.", HINT),
    "COMMAND_ID_REUSED": (
        "A command id already used for a different command: each command needs its own id.",
        NO,
    ),
    "CONFLICT": ("Another replica kept changing this table: reload it, then try again.", 1),
    "DEALER_FAILED": ("The dealer service refused the table's request (a server fault).", 5),
    "DEALER_UNAVAILABLE": ("The dealer service did not answer.", 5),
    "HOST_MUST_BE_HUMAN": ("The host role goes only to a person still at the table.", NO),
    "LEFT_THIS_GAME": ("A player who left during the game asks for a seat in it again.", NO),
    "NOT_ALLOWED": ("The caller may not send this command at this table.", NO),
    "NOT_ENOUGH_PLAYERS": (
        "The game starts with fewer (or more) seated players than its rules allow.",
        NO,
    ),
    "NOT_HOST": ("Only the host (of the table, or of the tournament) may do this.", NO),
    "NOT_YOUR_SEAT": ("The command acts for a seat that is not the caller's.", NO),
    "NO_SUCH_SEAT": ("The seat number is not a seat of this table.", NO),
    "OWN_SEAT": ("The host leaves with Leave, not by removing their own seat.", NO),
    "PRACTICE_TABLE": ("A practice table seats only its creator and bots.", NO),
    "REACTION_RATE": ("The seat sent more reactions than its rate allows.", HINT),
    "READ_ONLY": ("The caller holds no seat at this table: they may watch, not play.", NO),
    "SEAT_HOLDER": (
        "The caller holds a seat here: watch at the players' gateway, which shows their hand.",
        NO,
    ),
    "SEAT_LEFT": ("The caller left this table and no longer acts there.", NO),
    "SEAT_MUTED": ("The host muted this seat's chat.", NO),
    "SEAT_REMOVED": ("The host removed the caller from this table.", NO),
    "SEAT_TAKEN": (
        "The seat asked for is taken (ABORTED from the gateway's own pick: others took the "
        "free seats first, so join again).",
        NO,
    ),
    "SERVER_ONLY": ("Only the server moves a table on by itself.", NO),
    "STORE_UNAVAILABLE": (
        "The table's database cannot be reached: send the same command, same command id, again.",
        5,
    ),
    "TABLE_CLOSED": ("The table closed when nobody was left at it: create or join another.", NO),
    "TABLE_EXISTS": ("A table was created with this command id (or table id) already.", NO),
    "TABLE_FULL": ("Every seat of the table is taken.", NO),
    "TABLE_GONE": ("The table closed, or sat idle so long it left the lobby.", NO),
    "TABLE_NOT_FOUND": ("No such table (scoring: not yet, it follows the event stream).", NO),
    "TRICK_VERSION_REQUIRED": (
        "In rapid mode a play or pass names the trick version of the view it answers.",
        NO,
    ),
    # Moves: the codes of conformance/FORMAT.md.
    "INVALID_COMBINATION": ("The cards played do not make one combination the rules know.", NO),
    "MUST_INCLUDE": ("The first play of the game leaves out the card it must include.", NO),
    "MUST_PLAY": ("The player opens the trick (or played last, in rapid mode): no pass.", NO),
    "NOT_IN_HAND": ("A card named is not in the player's hand, or is named twice.", NO),
    "NOT_YOUR_TURN": ("It is another seat's turn.", NO),
    "SAME_OR_NOTHING": ("Same or nothing: only the same rank and count, or a pass.", NO),
    "SAT_OUT": ("The player passed and is out of this trick.", NO),
    "STALE": (
        "The command answers an older view: the table moved on (its version is in the "
        "metadata); read the new view and decide again.",
        NO,
    ),
    "TOO_LOW": ("The play does not beat the cards on the table.", NO),
    "WRONG_COUNT": ("The play does not answer the lead's number of cards (or poker hand).", NO),
    "WRONG_GIVE": (
        "The cards returned in the exchange are not the number owed (or none are owed).",
        NO,
    ),
    "WRONG_PHASE": ("The command does not fit the round's phase (deal, exchange, play).", NO),
    # Requests that are not well formed.
    "INVALID_ACCOUNT": ("An account id is empty or too long.", NO),
    "INVALID_ACCOUNT_NAME": ("An account name is too short, too long or has other characters.", NO),
    "INVALID_ACTOR": ("A tournament call does not name the account it acts for.", NO),
    "INVALID_AROUND": ("A leaderboard asks for too many players around an account.", NO),
    "INVALID_BOARD": ("No leaderboard has that name.", NO),
    "INVALID_CHAT": ("A chat message is empty, too long or holds characters not shown.", NO),
    "INVALID_CHOICE": ("The host's choice at a round's end is none of those offered.", NO),
    "INVALID_COMMAND_ID": ("A command id is missing, too long or has other characters.", NO),
    "INVALID_DAY": ("A day is not a UTC day written YYYY-MM-DD.", NO),
    "INVALID_DISPLAY_NAME": ("A display name is empty, too long or not showable.", NO),
    "INVALID_GATEWAY": ("A presence report names no gateway replica, or too long a name.", NO),
    "INVALID_INVITATION": ("Too many accounts invited at once, or one that is not an id.", NO),
    "INVALID_OPTIONS": ("A table option is unknown, or its value is not allowed.", NO),
    "INVALID_PAGE_SIZE": ("A page asks for more items than a page holds.", NO),
    "INVALID_PAGE_TOKEN": ("The page token is not one the server gave.", NO),
    "INVALID_PASSWORD": ("A password is too short or too long.", NO),
    "INVALID_PLAYER": ("A player id is empty or too long.", NO),
    "INVALID_PLAYERS": ("A deal asks for a number of players the rules do not deal to.", NO),
    "INVALID_PRESET": ("No rules preset has that name.", NO),
    "INVALID_REACTION": ("A reaction is not one of the reactions offered.", NO),
    "INVALID_ROUND": ("Game and round numbers start at 1.", NO),
    "INVALID_SEAT_COUNT": ("The table's rules do not play with that many seats.", NO),
    "INVALID_STATUS": ("A tournament status filter names an unknown status.", NO),
    "INVALID_TABLE_ID": ("A table id is not 1 to 64 letters, digits, - or _.", NO),
    "INVALID_TABLE_NAME": ("A table name is too long or not showable.", NO),
    "INVALID_TIME": ("A time is not ISO 8601.", NO),
    "INVALID_TOURNAMENT_ID": ("A tournament id is not 1 to 64 letters, digits, - or _.", NO),
    "INVALID_TOURNAMENT_NAME": ("A tournament name is empty, too long or not showable.", NO),
    "INVALID_VISIBILITY": ("A table's visibility is not practice, public or private.", NO),
    "INVALID_WINDOW": ("A leaderboard window is unknown, or the board has none.", NO),
    "MALFORMED_CARDS": ("A card list is empty, too long or names no card (10H, QS, BJ...).", NO),
    "MALFORMED_REQUEST": ("The request is not a message of this method (or no Connect one).", NO),
    "MISSING_ACTOR": ("A table command does not say who acts.", NO),
    "MISSING_COMMAND": ("A table command is empty: set one of its kinds.", NO),
    "NOT_A_SESSION_COMMAND": ("After the first watch request a session takes only commands.", NO),
    "SAME_ACCOUNT": ("A head-to-head is between two different accounts.", NO),
    "SESSION_NOT_STARTED": ("A session starts with a watch request saying where to begin.", NO),
    "TOO_MANY_ACCOUNTS": ("Too many accounts' names asked for at once.", NO),
    "UNKNOWN_BOT_LEVEL": ("A bot level is not basic or strong.", NO),
    "WRONG_TABLE": ("A session acts only at the table it watches.", NO),
    # Accounts and tokens.
    "EXTERNAL_IDENTITY": ("The identity comes from a club's provider: log out there.", NO),
    "ISSUER_UNTRUSTED": ("The token comes from an issuer this server does not trust.", NO),
    "LOGIN_FAILED": ("No account (or guest) has that name and password (or device secret).", NO),
    "NAME_CONFUSABLE": ("The account name looks like another account's.", NO),
    "NAME_TAKEN": ("The account name is taken (names are unique ignoring case).", NO),
    "NOT_A_GUEST": ("Only a guest account can be given a name and a password.", NO),
    "REFRESH_TOKEN_EXPIRED": ("The session expired: log in again.", NO),
    "REFRESH_TOKEN_INVALID": ("That is not a refresh token of this server.", NO),
    "REFRESH_TOKEN_REUSED": (
        "A refresh token was used twice: the session is ended for safety; log in again.",
        NO,
    ),
    "SESSION_REVOKED": ("The session was logged out: log in again.", NO),
    "TOKEN_AUDIENCE": ("The token is meant for another service.", NO),
    "TOKEN_EXPIRED": ("The access token expired: refresh it (or log in), then call again.", NO),
    "TOKEN_INVALID": ("The token does not verify, or is far too long.", NO),
    "TOKEN_MISSING": ("No token, or authorization metadata not reading 'Bearer <token>'.", NO),
    # Scores, ratings and audits.
    "ACCOUNT_NOT_FOUND": ("Scoring has seen no finished round of that account.", NO),
    "HEAD_TO_HEAD_NOT_YOURS": ("A head-to-head is shown only to the two players in it.", NO),
    "PAGE_TOKEN_EXPIRED": ("The page token is too old: start again from the first page.", NO),
    "PAGE_TOKEN_INVALID": ("The page token holds no page of this list.", NO),
    "PAGE_TOKEN_STALE": ("The board reset since the page token was given: start again.", NO),
    "PLAYER_NOT_FOUND": ("Scoring has seen no such player at any table.", NO),
    "ROUND_NOT_FOUND": ("That round was never dealt at this table.", NO),
    "ROUND_NOT_OVER": ("The round has not ended: its deal's secret is revealed only then.", NO),
    "SECRET_LOST": ("The dealer no longer has that round's secret.", NO),
    # Tournaments (the core's refusals).
    "ALREADY_ENTERED": ("The account has entered the tournament already.", NO),
    "BAD_COMMITMENT": ("A round is committed by its secret's fingerprint, and this is none.", NO),
    "BAD_RESULT": ("A table's result does not give each seat one place.", NO),
    "BAD_SEATING": ("A round's seating does not seat each drawn entrant once.", NO),
    "BAD_SETTINGS": ("The tournament's settings do not hold together (times, sizes...).", NO),
    "ENTRY_CLOSED": ("Entries to the tournament have closed.", NO),
    "GUESTS_NOT_ALLOWED": ("The tournament takes only named accounts, not guests.", NO),
    "NOT_ENOUGH_ENTRANTS": ("Too few entrants are left to draw a round.", NO),
    "NOT_ENTERED": ("The account has not entered the tournament.", NO),
    "NOT_INVITED": ("The tournament is by invitation, and the account has none.", NO),
    "NOT_SERVER": ("Only the tournament service runs the rounds.", NO),
    "NOT_STARTED": ("The tournament has not started: withdraw the entry instead.", NO),
    "NOT_YET_OPEN": ("Entries to the tournament are not open yet.", NO),
    "NO_SUCH_TOURNAMENT": ("There is no such tournament.", NO),
    "NO_TOURNAMENTS": ("This gateway serves no tournaments.", NO),
    "RESULTS_MISSING": ("A table of the round has no result yet.", NO),
    "RESULT_RECORDED": ("That table's result is recorded already.", NO),
    "ROUNDS_REMAIN": ("Rounds remain to be played.", NO),
    "ROUND_UNDER_WAY": ("The previous round is not over and revealed.", NO),
    "TOO_EARLY": ("The tournament has not reached its start time.", NO),
    "TOURNAMENT_BUSY": ("The tournament was changing at the same moment: send the call again.", 1),
    "TOURNAMENT_EXISTS": ("A tournament with that id exists already.", NO),
    "TOURNAMENT_FULL": ("The tournament has all the entrants it takes.", NO),
    "TOURNAMENT_OVER": ("The tournament has finished (or was cancelled).", NO),
    "TOURNAMENT_STARTED": ("The tournament has started: entries no longer change.", NO),
    "UNKNOWN_TABLE": ("The round has no such table.", NO),
    "WRONG_ROUND": ("The round named is not the one under way (or all were played).", NO),
    # Streams, limits and the servers.
    "COMPRESSION_UNSUPPORTED": ("The request is compressed: send it uncompressed.", NO),
    "DEADLINE_EXCEEDED": ("The stream ran for the time its Connect-Timeout-Ms allowed.", 1),
    "HISTORY_REWOUND": (
        "The table's history was rewound (a database failover lost its last changes): "
        "watch again from the start.",
        1,
    ),
    "INTERNAL": ("The server failed; its log says why.", 5),
    "ORIGIN_NOT_ALLOWED": ("Pages from this origin may not call this server.", NO),
    "RATE_LIMITED": ("Too many calls of this kind from this caller in a short time.", HINT),
    "SERVER_BUSY": ("The server has as many sign-ins and new tables under way as it takes.", HINT),
    "SERVER_DRAINING": ("The server is restarting: reconnect and resume from the last version.", 1),
    "STREAMS_FULL": ("The server carries all the streams it can.", HINT),
    "STREAM_BEHIND": ("The stream fell behind: watch again from the last version seen.", 1),
    "TOO_MANY_STREAMS": ("The caller has as many streams open as allowed: close one first.", NO),
    "UNKNOWN_METHOD": ("The path is no method of this API (the web edge's answer).", NO),
    "UPSTREAM_ERROR": ("A service behind the gateway failed without a reason of its own.", 5),
    "UPSTREAM_UNAVAILABLE": ("A service behind the gateway cannot be reached right now.", 5),
    "VERSION_AHEAD": ("The watch asks for a version the table has not reached.", NO),
}
