// Signing in: as a guest (a name only), or with an account's name and password
// (logging in, or creating the account when the box is ticked).

import { gateway, identity, sentence } from "./api";
import { announce, byId, fill, h, panelForm } from "./dom";

export function showSignIn(onSignedIn: () => void): void {
  const status = h("p", { id: "signin-status", role: "status" });
  const guestName = h("input", { id: "guest-name", name: "guest-name", autocomplete: "nickname", maxlength: 40, required: true });
  const guest = panelForm(
    "guest",
    "Play as a guest",
    [["Your name at the table", guestName]],
    h("button", { type: "submit", class: "gold" }, "Sign in as a guest"),
    () =>
      run(async () => {
        const name = guestName.value.trim();
        const answer = await gateway.createGuest({ displayName: name });
        identity.remember(answer.credentials, name);
      }),
  );

  const accountName = h("input", { id: "account-name", autocomplete: "username", required: true });
  const password = h("input", { id: "account-password", type: "password", autocomplete: "current-password", required: true });
  const create = h("input", { id: "account-create", type: "checkbox" });
  const account = panelForm(
    "account",
    "Sign in with your name",
    [["Name", accountName], ["Password", password], h("label", { class: "inline" }, create, " This is a new account: create it")],
    h("button", { type: "submit" }, "Sign in"),
    () =>
      run(async () => {
        const name = accountName.value.trim();
        const answer = create.checked
          ? await gateway.register({ name, password: password.value, displayName: name })
          : await gateway.logIn({ name, password: password.value });
        password.value = "";
        identity.remember(answer.credentials, name);
      }),
  );

  async function run(signIn: () => Promise<void>): Promise<void> {
    status.textContent = "Signing in…";
    try {
      await signIn();
      announce(`Signed in as ${identity.name}.`);
      onSignedIn();
    } catch (error) {
      identity.clear();
      status.textContent = `Could not sign in: ${sentence(error)}`;
    }
  }

  fill(byId("main"), h("h1", {}, "President"), h("div", { class: "columns" }, guest, account), status);
  guestName.focus();
}
