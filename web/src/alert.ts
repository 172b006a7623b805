// The turn alert: when the table starts waiting for you (your turn, or cards to give back in
// the exchange), the tab's title says so and a short two-note chime plays (WebAudio, made
// here: no sound file). A mute button silences the chime on this device (localStorage).

import type { TableView } from "@president/client/game";
import { h } from "./dom";

const TITLE = "President";
const MUTED_KEY = "president.sound-muted";

/** Whether ``view`` waits for the viewing seat. */
export function waitsForYou(view: TableView): boolean {
  const round = view.round;
  if (view.phase !== "round" || view.viewerSeat === undefined || !round) return false;
  if (round.phase === "exchange") return round.returnOwed > 0;
  return round.phase === "play" && round.toAct === view.viewerSeat;
}

export class TurnAlert {
  readonly button: HTMLButtonElement;
  private muted = localStorage.getItem(MUTED_KEY) === "true";
  private waiting = false;
  private audio: AudioContext | null = null;
  /** Chimes played on this page (the tests read it from the page's data-chimes). */
  private chimes = 0;
  private readonly unlock = (): void => {
    // Browsers let a page make sound only after a person's gesture: the first one wakes it.
    this.audio ??= new AudioContext();
    void this.audio.resume();
  };

  constructor() {
    this.button = h("button", { id: "sound", "data-key": "sound", onclick: () => this.toggle() });
    this.showButton();
    document.addEventListener("pointerdown", this.unlock);
    document.addEventListener("keydown", this.unlock);
  }

  /** Called with every new view: a wait that starts chimes once and marks the title. */
  update(view: TableView): void {
    const waiting = waitsForYou(view);
    if (waiting && !this.waiting) this.chime();
    this.waiting = waiting;
    document.title = waiting ? `● Your turn · ${TITLE}` : TITLE;
  }

  close(): void {
    document.title = TITLE;
    document.removeEventListener("pointerdown", this.unlock);
    document.removeEventListener("keydown", this.unlock);
    void this.audio?.close();
  }

  private toggle(): void {
    this.muted = !this.muted;
    localStorage.setItem(MUTED_KEY, String(this.muted));
    this.showButton();
  }

  private showButton(): void {
    this.button.textContent = this.muted ? "Sound off" : "Sound on";
    this.button.setAttribute("aria-pressed", String(!this.muted));
  }

  private chime(): void {
    const audio = this.audio;
    if (this.muted || !audio || audio.state !== "running") return;
    const start = audio.currentTime;
    for (const [offset, pitch] of [[0, 660], [0.12, 880]] as const) {
      const tone = audio.createOscillator();
      const volume = audio.createGain();
      tone.frequency.value = pitch;
      volume.gain.setValueAtTime(0.0001, start + offset);
      volume.gain.exponentialRampToValueAtTime(0.2, start + offset + 0.02);
      volume.gain.exponentialRampToValueAtTime(0.0001, start + offset + 0.16);
      tone.connect(volume).connect(audio.destination);
      tone.start(start + offset);
      tone.stop(start + offset + 0.18);
    }
    this.chimes += 1;
    document.body.dataset.chimes = String(this.chimes);
  }
}
