// The presets' rules in a few lines each (README's "The rules: presets and options"),
// shown one tap away at the table and under the lobby's preset choice.

export interface Preset {
  players: string;
  summary: string;
  rules: string[];
}

export const PRESETS: Record<string, Preset> = {
  classic: {
    players: "4 (3 to 7)",
    summary: "3♣ leads and must be played; plays must be strictly higher; 2 and 1 points to 11.",
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
    summary: "3♣ leads; strictly higher; the Peasant leads later rounds; 7 rounds.",
    rules: [
      "The 3 of clubs leads the first round.",
      "Play the same number of cards as the pile, of a strictly higher rank; pass and play again later.",
      "The Peasant (the lowest) leads later rounds, after the exchange.",
      "A point for every player who finishes below you; 7 rounds (5 or 10 at a private table).",
    ],
  },
  house: {
    players: "3 to 6",
    summary: "Q♥ starts; an equal rank may answer; a pass sits you out of the trick; 30 s turns.",
    rules: [
      "The queen of hearts starts the first round.",
      "An equal rank may answer the pile; a pass sits you out until the trick closes.",
      "The Asshole leads later rounds; +3, +2, +1 points to the first three.",
      "Each turn lasts 30 seconds; then the server plays for you.",
    ],
  },
  "house-rapid": {
    players: "3 to 6",
    summary: "house without turns: the first legal play on the pile wins; a shared 10 s timer.",
    rules: [
      "Anyone may play at any time: the first legal play on the pile as you saw it wins.",
      "A play that lost the race is refused and your cards stay in your hand.",
      "When nobody plays for 10 seconds the trick closes.",
    ],
  },
  traditional: {
    players: "3 to 8",
    summary: "The folk rules: more cards beat fewer, extras set aside, every optional rule.",
    rules: [
      "More cards beat fewer; cards left over at the deal are set aside.",
      "Revolutions, fours and the strongest card close the trick; jokers are wild.",
    ],
  },
};
