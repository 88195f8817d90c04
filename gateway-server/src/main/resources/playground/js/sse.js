// Server-sent events over fetch: EventSource cannot POST a body or send an Authorization header.

/**
 * Reads a text/event-stream response, calling onEvent({id, data, raw}) for each event. `id` is
 * the event's own `id:` line (null when it has none: the gateway puts one only on the last SSE
 * event of each stored event). Resolves when the stream ends; rejects with an AbortError when cut.
 */
export async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = { id: null, data: [], raw: [] };
  const dispatch = () => {
    if (event.data.length > 0) {
      onEvent({ id: event.id, data: event.data.join('\n'), raw: event.raw.join('\n') });
    }
    event = { id: null, data: [], raw: [] };
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      if (line === '') {
        dispatch();
        continue;
      }
      event.raw.push(line);
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') event.data.push(value);
      else if (field === 'id') event.id = value;
    }
  }
  dispatch();
}
