// The stream the node converts for a browser that cannot play a file as
// it is (GET /api/stream/<cid>): fragmented MP4, appended to a
// MediaSource as it arrives, so the player's own bar seeks; a seek past
// what is loaded asks the node for a stream from there, whose times
// (from 0) the source buffer places from that point on. While the node
// converts slower than the film plays, a sentence under the player says
// so (GET /api/stream/<cid>/status).

import { api, authHeaders } from "./client.js";

// ahead is how many seconds past the playing position are loaded before
// the page stops reading (the node goes on converting to its cache).
const ahead = 60;

// howToPlay says how this browser plays a file of type mime, whose
// fileinfo (its document's) ffprobe filled: kind is "video", "audio" or
// "" (none); stream, when set, is the node's status of the file (GET
// /api/stream/<cid>/status): the browser cannot play it as it is, so
// the node converts it. A file of no codec ffprobe saw plays as it is,
// if the browser says it may.
export async function howToPlay(mime, cid, fileinfo) {
  const kind = typeof mime === "string" ? (mime.startsWith("video/") ? "video" : mime.startsWith("audio/") ? "audio" : "") : "";
  const asIs = kind && document.createElement(kind).canPlayType(mime) ? kind : "";
  if (!kind || !hasCodec(fileinfo)) return { kind: asIs };
  let st = null;
  try {
    st = await api("/api/stream/" + encodeURIComponent(cid) + "/status", { ask: false });
  } catch (e) {
    return { kind: asIs }; // no streams here (no ffmpeg, a stranger): as before
  }
  if (asIs && decodes(st.source.video, st.videoType) && decodes(st.source.audio, st.audioType)) return { kind };
  if (!window.MediaSource) return { kind: asIs };
  return { kind, stream: st };
}

// hasCodec says whether ffprobe saw a video or audio codec in the file.
function hasCodec(fi) {
  const sd = fi && typeof fi === "object" ? fi.streamdetails : null;
  if (!sd || typeof sd !== "object") return false;
  const first = (l) => (Array.isArray(l) && l[0] && typeof l[0] === "object" ? l[0].codec : "");
  return !!(first(sd.video) || first(sd.audio));
}

// decodes says whether the browser decodes a file's codec (none: true).
function decodes(codec, type) {
  if (!codec) return true;
  return !!type && document.createElement("video").canPlayType(type) !== "";
}

// mse says whether Media Source Extensions take type.
function mse(type) { return !!type && MediaSource.isTypeSupported(type); }

// playStream makes media play the node's stream of cid (st its status);
// duration is the file's, in seconds (fileinfo/duration), which the
// player's bar spans.
export function playStream(media, cid, st, duration, note) {
  const loader = new Loader(media, cid, st, duration, note);
  media.addEventListener("seeking", () => loader.seeked());
  return loader;
}

class Loader {
  constructor(media, cid, st, duration, note) {
    this.media = media;
    this.cid = cid;
    this.flags = "video=" + (mse(st.videoType) ? 1 : 0) + "&audio=" + (mse(st.audioType) ? 1 : 0);
    this.note = note;
    this.gen = 0;
    this.ctl = null;
    this.sb = null;
    this.ms = new MediaSource();
    media.src = URL.createObjectURL(this.ms);
    this.ms.addEventListener("sourceopen", () => {
      if (duration > 0) this.ms.duration = duration;
      this.load(0);
    }, { once: true });
    this.timer = setInterval(() => this.status(), 3000);
    media.addEventListener("timeupdate", () => this.resume());
  }

  // resume asks for the rest of a stream whose answer was cut, once what
  // is loaded ahead runs low.
  resume() {
    if (this.cut !== this.gen || this.loadedAhead() > 10) return;
    this.cut = 0;
    const b = this.sb.buffered;
    this.load(b.length ? b.end(b.length - 1) : this.media.currentTime, true);
  }

  // seeked loads from the new place unless it is loaded already.
  seeked() {
    const t = this.media.currentTime;
    const b = this.media.buffered;
    for (let i = 0; i < b.length; i++) if (t >= b.start(i) && t < b.end(i) - 0.5) return;
    this.load(t);
  }

  // load reads the node's stream from start seconds, replacing what was
  // loaded (keep: going on after it, once an answer was cut).
  async load(start, keep) {
    const gen = ++this.gen;
    if (this.ctl) this.ctl.abort();
    const ctl = new AbortController();
    this.ctl = ctl;
    this.started = start;
    let resp;
    try {
      resp = await fetch("/api/stream/" + encodeURIComponent(this.cid) + "?start=" + start.toFixed(3) + "&" + this.flags,
        { headers: authHeaders(), signal: ctl.signal });
    } catch (e) {
      if (gen === this.gen) this.say("Could not load the converted stream: " + e.message);
      return;
    }
    if (gen !== this.gen) return;
    if (!resp.ok) return this.refused(resp, gen, start);
    this.say("");
    try {
      await this.reset(resp.headers.get("Content-Type"), start, keep);
      await this.read(resp.body.getReader(), gen);
    } catch (e) {
      if (gen !== this.gen || e.name === "AbortError") return;
      // Cut (a player paused past the node's patience, a network
      // hiccup): the page asks again from what it holds, when it needs it.
      this.cut = gen;
    }
  }

  // refused says why the node did not stream; a busy node is asked again
  // when it says to.
  async refused(resp, gen, start) {
    let msg = resp.status + " " + resp.statusText;
    try { msg = (await resp.json()).error || msg; } catch (e) { /* not JSON */ }
    this.say(msg);
    const after = parseInt(resp.headers.get("Retry-After") || "", 10);
    if (resp.status === 503 && after > 0) setTimeout(() => { if (gen === this.gen) this.load(start); }, after * 1000);
  }

  // reset makes the source buffer ready for a new stream of type, whose
  // times (from 0) are placed from start on; what it holds is removed
  // unless keep.
  async reset(type, start, keep) {
    if (!this.sb) {
      this.sb = this.ms.addSourceBuffer(type);
    } else {
      await this.idle();
      this.sb.abort();
      if (!keep && this.sb.buffered.length) {
        this.sb.remove(0, Infinity);
        await this.idle();
      }
    }
    this.sb.timestampOffset = start;
  }

  // read appends the stream as it arrives, pausing while enough is
  // loaded ahead of the playing position.
  async read(reader, gen) {
    let first = true;
    for (;;) {
      const { done, value } = await reader.read();
      if (gen !== this.gen) { reader.cancel(); return; }
      if (done) break;
      await this.append(value);
      if (first && this.sb.buffered.length) {
        first = false;
        // The stream starts at a keyframe, a little after the place
        // asked for, perhaps: start there.
        const s = this.sb.buffered.start(0);
        if (this.media.currentTime < s && s - this.media.currentTime < 2) this.media.currentTime = s;
      }
      while (gen === this.gen && this.loadedAhead() > ahead) await sleep(1000);
      if (gen !== this.gen) { reader.cancel(); return; }
    }
    await this.idle();
    if (gen === this.gen && this.ms.readyState === "open") this.ms.endOfStream();
  }

  async append(chunk) {
    await this.idle();
    try {
      this.sb.appendBuffer(chunk);
    } catch (e) {
      if (e.name !== "QuotaExceededError") throw e;
      // Full: what was played is let go, and the chunk appended again.
      this.sb.remove(0, Math.max(0, this.media.currentTime - 10));
      await this.idle();
      this.sb.appendBuffer(chunk);
    }
    await this.idle();
  }

  loadedAhead() {
    const b = this.sb.buffered;
    return b.length ? b.end(b.length - 1) - this.media.currentTime : 0;
  }

  idle() {
    if (!this.sb.updating) return Promise.resolve();
    return new Promise((r) => this.sb.addEventListener("updateend", r, { once: true }));
  }

  // status shows the node's sentence while it cannot keep up.
  async status() {
    if (!this.media.isConnected) { clearInterval(this.timer); if (this.ctl) this.ctl.abort(); return; }
    try {
      const st = await api("/api/stream/" + encodeURIComponent(this.cid) + "/status", { ask: false });
      this.note.dataset.speed = st.stream ? String(st.stream.speed) : "";
      this.note.dataset.mode = st.stream ? st.stream.mode : "";
      this.say(st.stream && st.stream.note ? st.stream.note : "", true);
    } catch (e) { /* the next one */ }
  }

  // say shows msg under the player (a note of the status, or an error,
  // which a note does not clear).
  say(msg, fromStatus) {
    if (fromStatus && this.note.dataset.error) return;
    this.note.dataset.error = fromStatus ? "" : (msg ? "1" : "");
    this.note.textContent = msg;
    this.note.hidden = !msg;
  }
}

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
