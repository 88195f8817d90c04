/** A minimal event emitter: on(name, fn) returns a function that removes the listener. */
export class Emitter {
  #listeners = new Map();

  on(name, fn) {
    if (!this.#listeners.has(name)) this.#listeners.set(name, new Set());
    this.#listeners.get(name).add(fn);
    return () => this.#listeners.get(name)?.delete(fn);
  }

  emit(name, value) {
    for (const fn of this.#listeners.get(name) ?? []) {
      try {
        fn(value);
      } catch (e) {
        console.error(`listener of ${name} failed`, e);
      }
    }
  }
}
