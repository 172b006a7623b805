// The lobby's new table: the preset's common options as labelled controls (how the game
// ends, seconds per turn, jokers, revolutions, the practice bots' level), each starting at
// the preset's own value, and the free ``name=value`` box for any other option.

import { h, type Field } from "./dom";
import { gameEndWords, PRESETS } from "./rules";

/** How long a practice table's bots wait before each move in turn play (the server's default
 * is at once): long enough to see who played what, short enough not to drag. */
const PRACTICE_BOT_PACE_MS = "800";

/** ``name=value`` lines as options; a line without "=" is refused in words. */
function parseOptions(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(/[\n]+/).map((line) => line.trim()).filter(Boolean)) {
    const at = part.indexOf("=");
    if (at <= 0) throw new Error(`“${part}” is not an option: write name=value, as turn_seconds=30`);
    out[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return out;
}

function choice(id: string, options: [value: string, label: string][]): HTMLSelectElement {
  return h("select", { id }, ...options.map(([value, label]) => h("option", { value }, label)));
}

export class NewTableOptions {
  private readonly gameEnd = choice("new-game-end", [
    ["", "as the preset says"],
    ["rounds", "after a number of rounds"],
    ["target", "at a number of points"],
  ]);
  private readonly gameEndCount = h("input", { id: "new-game-end-count", type: "number", min: 1, max: 99 });
  private readonly turnSeconds = h("input", { id: "new-turn-seconds", type: "number", min: 1, max: 600 });
  private readonly jokers = h("input", { id: "new-jokers", type: "checkbox" });
  private readonly revolution = h("input", { id: "new-revolution", type: "checkbox" });
  private readonly botLevel = choice("new-bot-level", [
    ["basic", "basic"],
    ["strong", "strong"],
  ]);
  private readonly more = h("textarea", { id: "new-options", rows: 3, placeholder: "bot_delay_ms=600\ntakeover_seconds=10" });
  private preset = "classic";

  constructor() {
    this.gameEnd.addEventListener("change", () => this.showCount());
  }

  /** The rounds or points: the preset's own (shown, not editable) while the preset decides;
   * editable once the player chooses how the game ends, starting at the preset's number when
   * it ends the same way. */
  private showCount(): void {
    const [kind, count] = (PRESETS[this.preset]?.defaults.gameEnd ?? "").split(":");
    const decided = this.gameEnd.value === "";
    this.gameEndCount.disabled = decided;
    if (decided) this.gameEndCount.value = count ?? "";
    else if (kind !== this.gameEnd.value || !count) this.gameEndCount.value = this.gameEnd.value === "rounds" ? "5" : "11";
    else this.gameEndCount.value = count;
  }

  /** The controls, labelled, for the create form. */
  fields(): Field[] {
    const inline = (label: string, box: HTMLInputElement): HTMLElement => h("label", { class: "inline", for: box.id }, box, label);
    return [
      ["The game ends", this.gameEnd],
      ["Rounds or points to end the game", this.gameEndCount],
      ["Seconds per turn", this.turnSeconds],
      inline("Jokers (wild cards)", this.jokers),
      inline("Revolutions (four of a kind reverses the order)", this.revolution),
      ["Bots' level (practice tables)", this.botLevel],
      ["More options, one name=value a line (they win over the controls; see the rules)", this.more],
    ];
  }

  /** Start every control at ``preset``'s own value. */
  showPreset(preset: string): void {
    this.preset = preset;
    const defaults = PRESETS[preset]?.defaults;
    if (!defaults) return;
    this.gameEnd.options[0].textContent = `as the preset says (${gameEndWords(defaults.gameEnd)})`;
    this.turnSeconds.value = String(defaults.turnSeconds);
    this.jokers.checked = defaults.jokers;
    this.revolution.checked = defaults.revolution;
    this.showCount();
  }

  /** The practice bots' level applies at practice tables only. */
  showPractice(practice: boolean): void {
    this.botLevel.disabled = !practice;
  }

  /** The options to send: only what differs from the preset, then the free box's lines. */
  read(): Record<string, string> {
    const defaults = PRESETS[this.preset]?.defaults;
    const out: Record<string, string> = {};
    if (this.gameEnd.value) out.game_end = `${this.gameEnd.value}:${this.gameEndCount.value}`;
    if (this.turnSeconds.value && Number(this.turnSeconds.value) !== defaults?.turnSeconds) out.turn_seconds = this.turnSeconds.value;
    if (this.jokers.checked !== defaults?.jokers) out.jokers = String(this.jokers.checked);
    if (this.revolution.checked !== defaults?.revolution) out.revolution = String(this.revolution.checked);
    if (!this.botLevel.disabled && this.botLevel.value !== "basic") out.bot_level = this.botLevel.value;
    if (!this.botLevel.disabled) out.bot_pace_ms = PRACTICE_BOT_PACE_MS; // a person can follow the bots
    return { ...out, ...parseOptions(this.more.value) };
  }
}
