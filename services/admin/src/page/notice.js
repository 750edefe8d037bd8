// The line under the top bar: what just happened, or what went wrong.
import { formValues } from "./dom.js";

let timer;

export function notify(text, kind = "info") {
  const box = document.getElementById("notice");
  box.textContent = text;
  box.className = `notice ${kind === "error" ? "error" : ""}`;
  box.hidden = false;
  clearTimeout(timer);
  timer = setTimeout(() => (box.hidden = true), kind === "error" ? 12_000 : 5_000);
}

/** Runs an async action, reporting its failure on the notice line. */
export async function guarded(work) {
  try {
    return await work();
  } catch (error) {
    notify(error.message ?? String(error), "error");
    return undefined;
  }
}

/** On submit (no page load): `submit` with the form's values, its failure reported like guarded's. */
export function onSubmit(form, submit) {
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void guarded(() => submit(formValues(form)));
  });
}
