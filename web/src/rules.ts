// The presets' rules in a few lines each (README's "The rules: presets and options"),
// shown one tap away at the table and under the lobby's preset choice.

/** The preset's values of the options the lobby offers as controls (the server's, checked
 * against ``options_for`` by tests/unit/web/test_preset_defaults.py). */
export interface PresetDefaults {
  gameEnd: string;
  turnSeconds: number;
  jokers: boolean;
  revolution: boolean;
}

export interface Preset {
  players: string;
  /** One line; cards by their codes ("3C"), which the page shows as faces with their names. */
  summary: string;
  rules: string[];
  defaults: PresetDefaults;
}

/** ``game_end`` in words: "first to 11 points", "7 rounds", "no end: the host ends it". */
export function gameEndWords(gameEnd: string): string {
  const [kind, count] = gameEnd.split(":");
  if (kind === "target") return `first to ${count} points`;
  if (kind === "rounds") return `${count} rounds`;
  return "no end: the host ends it";
}

export const PRESETS: Record<string, Preset> = {
  classic: {
    players: "4 (3 to 7)",
    defaults: { gameEnd: "target:11", turnSeconds: 30, jokers: false, revolution: false },
    summary: "3C leads and must be played; plays must be strictly higher; 2 and 1 points to 11.",
    rules: [
      "The 3 of clubs leads the first round and must be in the first play.",
      "Play the same number of cards as the pile, of a strictly higher rank; 2 is the highest.",
      "A pass does not stop you from playing again in the same trick.",
      "When everyone else passes, the last player to play leads the next trick.",
      "The President leads later rounds; the Asshole gives the President their best cards.",
      "President 2 points, Vice-President 1; the game ends at 11 with a sole leader.",
    ],
  },
  club: {
    players: "4 to 7",
    defaults: { gameEnd: "rounds:7", turnSeconds: 30, jokers: false, revolution: false },
    summary: "3C leads; strictly higher; the Peasant leads later rounds; 7 rounds.",
    rules: [
      "The 3 of clubs leads the first round.",
      "Play the same number of cards as the pile, of a strictly higher rank; pass and play again later.",
      "The Peasant (the lowest) leads later rounds, after the exchange.",
      "A point for every player who finishes below you; 7 rounds (5 or 10 at a private table).",
    ],
  },
  house: {
    players: "3 to 6",
    defaults: { gameEnd: "unlimited", turnSeconds: 30, jokers: false, revolution: true },
    summary: "QH starts; an equal rank may answer; a pass sits you out of the trick; 30 s turns.",
    rules: [
      "The queen of hearts starts the first round.",
      "An equal rank may answer the pile; a pass sits you out until the trick closes.",
      "The Asshole leads later rounds; +3, +2, +1 points to the first three.",
      "Each turn lasts {turn_seconds} seconds; then the server plays for you.",
    ],
  },
  "house-rapid": {
    players: "3 to 6",
    defaults: { gameEnd: "unlimited", turnSeconds: 30, jokers: false, revolution: true },
    summary: "house without turns: the first legal play on the pile wins; a shared 10 s timer.",
    rules: [
      "Anyone may play at any time: the first legal play on the pile as you saw it wins.",
      "A play that lost the race is refused and your cards stay in your hand.",
      "When nobody plays for {rapid_seconds} seconds the trick closes.",
    ],
  },
  traditional: {
    players: "3 to 8",
    defaults: { gameEnd: "unlimited", turnSeconds: 30, jokers: false, revolution: false },
    summary: "The folk rules: more cards beat fewer, extras set aside; every optional rule can be switched on.",
    rules: [
      "More cards beat fewer; cards left over at the deal are set aside; two cards change hands in the exchange.",
      "Off unless the table switches them on: revolutions, jokers, the skip on a matching rank, one lap, matching counts, twos up a count.",
    ],
  },
};

/** The server's shared timer of a rapid table when the table sets none (``rapid_seconds``). */
const RAPID_SECONDS = 10;

/** A preset's rules in words with this table's own timers: its options where it set them,
 * else the preset's values (a table of 6 s races reads 6 seconds, not the preset's 10). */
export function ruleLines(preset: string, options: Record<string, string>): string[] {
  const rules = PRESETS[preset];
  const values: Record<string, string> = {
    turn_seconds: String(rules?.defaults.turnSeconds ?? 30),
    rapid_seconds: String(RAPID_SECONDS),
    ...options,
  };
  return (rules?.rules ?? []).map((line) => line.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole));
}
