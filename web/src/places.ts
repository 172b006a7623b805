// Places and roles in words: "1st", one spelling of the rulebooks' titles, and why a seat
// that went out first sits at the bottom (it went out on a 2). Pure, with no imports: Node
// runs it as it is in web/test/places.test.js.

/** A role as the table writes it: the rulebook's title (President, Asshole, Peasant, Scum…),
 * spelt one way in every preset: "Vice-President", "Vice-Asshole", "Vice-Peasant", "Vice-Scum". */
export function roleTitle(role: string): string {
  return role.replace(/^vice[- ]+(\w)/i, (_: string, first: string) => `Vice-${first.toUpperCase()}`);
}

/** "1st", "2nd", "3rd", "4th" … for a place counted from 0. */
export function ordinal(place: number): string {
  const n = place + 1;
  const teen = n % 100 >= 11 && n % 100 <= 13;
  return `${n}${teen ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th")}`;
}

/** What a seat's going out says. */
export interface WentOut {
  /** Its place in the order the hands emptied, from 0. */
  out: number;
  /** Its place in the round's standings, from 0 (-1 before the round ends). */
  place: number;
  /** The table saw it go out on a 2 (the PlayerWentOut event said so). */
  penalised: boolean;
  /** The table plays finish_with_two. */
  finishWithTwo: boolean;
}

/** "out 1st", and, for a seat that went out on a 2 under finish_with_two, why its place is
 * at the bottom (a page that joined late sees it from the place alone: below its going out). */
export function outText(seat: WentOut): string {
  const onTwo = seat.penalised || (seat.finishWithTwo && seat.place > seat.out);
  return onTwo ? `out ${ordinal(seat.out)} on a 2: the rules put them in a bottom place` : `out ${ordinal(seat.out)}`;
}
