// hreader's local web view. Plain JavaScript, no libraries, nothing fetched from outside this origin.
// Data from the vault only ever reaches the page through textContent and SVG attributes, never as HTML.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg"; // a namespace name, not a request
  const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  // Every path of the app starts with this unguessable prefix (it scopes the session cookie).
  const base = (document.querySelector('meta[name="app-base"]') || {}).content || "";

  // hReader's five scopes, each ending at `at` and starting this much earlier.
  const SPANS = {
    day: (d) => d.setDate(d.getDate() - 1),
    week: (d) => d.setDate(d.getDate() - 7),
    month: (d) => d.setMonth(d.getMonth() - 1),
    year: (d) => d.setFullYear(d.getFullYear() - 1),
    decade: (d) => d.setFullYear(d.getFullYear() - 10),
  };
  const LATER = {
    day: (d) => d.setDate(d.getDate() + 1),
    week: (d) => d.setDate(d.getDate() + 7),
    month: (d) => d.setMonth(d.getMonth() + 1),
    year: (d) => d.setFullYear(d.getFullYear() + 1),
    decade: (d) => d.setFullYear(d.getFullYear() + 10),
  };
  const SECTIONS = [
    ["conditions", "Conditions"], ["allergies", "Allergies"], ["medications", "Medications"],
    ["encounters", "Encounters"], ["procedures", "Procedures"], ["results", "Results"],
    ["immunizations", "Immunizations"], ["symptoms", "Symptoms"], ["observations", "Other observations"],
  ];

  const TIMELINE_KEYS = SECTIONS.map(([key]) => key).concat(["activity", "workouts", "timeline_medications", "regimens", "levels"]);

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  }

  function svg(tag, attributes) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
    return node;
  }

  const dateText = (seconds) => new Date(seconds * 1000).toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
  const timeText = (seconds) => new Date(seconds * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  const numberText = (n) => (Math.abs(n) >= 100 ? n.toFixed(0) : Number(n.toFixed(2)).toString());

  // A busy server answers 503 with Retry-After (docs/web.md, "Many requests at once"): ask again after
  // it, at most 5 s, three times, before showing the error.
  async function getJSON(url) {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      const body = await response.json().catch(() => ({}));
      if (response.ok) return body;
      const retryAfter = response.headers.get("Retry-After");
      const wait = retryAfter === null ? NaN : Number(retryAfter);
      if (response.status === 503 && attempt < 3 && wait >= 0) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 5) * 1000));
        continue;
      }
      throw new Error(body.error || response.status + " " + response.statusText);
    }
  }

  // MARK: The timeline page

  function setUpTimeline(root) {
    const state = {
      patient: root.dataset.patient,
      page: root.dataset.page || "week",
      at: root.dataset.at ? new Date(isNaN(root.dataset.at) ? root.dataset.at : Number(root.dataset.at) * 1000) : null,
      latest: root.dataset.latest ? Number(root.dataset.latest) : null,
      loads: 0,
    };
    const status = document.getElementById("status");

    function end() { return state.at ? new Date(state.at) : new Date(); }

    function remember() {
      const query = new URLSearchParams({ page: state.page });
      if (state.at) query.set("at", String(Math.floor(state.at.getTime() / 1000)));
      history.replaceState(null, "", "?" + query.toString());
      for (const link of document.querySelectorAll(".scopes .scope")) {
        link.classList.toggle("active", link.dataset.scope === state.page);
      }
      for (const input of document.querySelectorAll('input[name="return_to"]')) {
        input.value = location.pathname + "?" + query.toString();
      }
    }

    async function load() {
      remember();
      const load = ++state.loads;
      status.textContent = "Loading the timeline…";
      root.dataset.loaded = "";
      // Every key but `vitals`: the charts read the series API, which carries times and stays small
      // however many readings a watch recorded; the timeline's vitals are only their values.
      // detail=1: each record's entry id (a result links to its trend) and its value in readable units.
      const query = new URLSearchParams({ patient: state.patient, page: state.page, types: TIMELINE_KEYS.join(","), detail: "1" });
      if (state.at) query.set("at", String(Math.floor(state.at.getTime() / 1000)));
      try {
        const timeline = await getJSON(base + "/timeline.json?" + query.toString());
        const vitals = await getJSON(`${base}/api/patients/${encodeURIComponent(state.patient)}/vitals?from=${timeline.start_date}&to=${timeline.end_date}`);
        if (load !== state.loads) return; // a newer load started while this one waited
        root.dataset.start = timeline.start_date; // charts share the range's time axis
        root.dataset.end = timeline.end_date;
        render(timeline, vitals);
        root.dataset.loaded = state.page;
      } catch (error) {
        status.textContent = "Could not load the timeline: " + error.message;
      }
    }

    function render(timeline, vitals) {
      document.getElementById("range-label").textContent = `${timeText(timeline.start_date)} – ${timeText(timeline.end_date)}`;
      const charts = document.getElementById("charts");
      charts.replaceChildren(...vitals.vitals.filter((s) => s.points.length > 0).map(chart));
      if (charts.childElementCount > 0) charts.prepend(el("h2", {}, "Vital signs"));

      const posted = document.getElementById("posted");
      posted.replaceChildren();
      const levels = Object.entries(timeline.levels || {});
      if (levels.length > 0) {
        posted.append(el("h2", {}, "Levels"), el("dl", { class: "levels" },
          ...levels.flatMap(([name, values]) => [el("dt", {}, name), el("dd", { "data-level": name }, values.join(", "))])));
      }
      postedList(posted, "Medications you added", timeline.timeline_medications, "posted-medications",
        (m) => [m.name || m.medication || "(no name)", m.dose, m.directions].filter(Boolean).join(" · "));
      postedList(posted, "Regimens", timeline.regimens, "posted-regimens",
        (r) => [r.medication || r.name || "(no name)", r.dose, r.schedule].filter(Boolean).join(" · "));

      const entries = document.getElementById("entries");
      entries.replaceChildren();
      let count = 0;
      for (const [key, title] of SECTIONS) {
        const items = timeline[key] || [];
        if (items.length === 0) continue;
        count += items.length;
        entries.append(el("section", { class: "entry-list", "data-key": key }, el("h2", {}, `${title} (${items.length})`),
          el("ul", {}, ...items.map((item) => {
            // `display` is the value in the units people read (Apple Health's 0.99 % as 99 %).
            const shown = item.display !== undefined ? item.display : item.measurement && item.measurement.value !== null
              ? `${item.measurement.value}${item.measurement.unit ? " " + item.measurement.unit : ""}` : "";
            const value = shown ? ` — ${shown}` : "";
            // A fact several sources state is one item: say who states it.
            const from = item.sources && item.copies > 1
              ? [" ", el("span", { class: "from" }, `from: ${item.sources.join(", ")}` +
                  (item.copies > item.sources.length ? ` (${item.copies} copies)` : ""))] : [];
            // A SMART Health Card brought it: how it was checked (the verified badge).
            const badge = item.verification ? [" ", el("span", { class: `badge badge-${item.verification.status}`,
              "data-verification": item.verification.status }, (item.verification.status === "verified" ? "\u2713 " : "") + item.badge)] : [];
            if (key === "results" && item.entry_id !== undefined) {
              const href = `${base}/patients/${encodeURIComponent(state.patient)}/trends?entry=${encodeURIComponent(item.entry_id)}`;
              return el("li", {}, el("time", {}, dateText(item.date)), " ", item.description + value, " ",
                el("a", { class: "trend-link", href }, "trend"), ...badge, ...from);
            }
            return el("li", {}, el("time", {}, dateText(item.date)), " ", item.description + value, ...badge, ...from);
          }))));
      }
      // Each workout with what its device said of it (distance, energy, route), beside its duration.
      const workouts = timeline.workouts || [];
      if (workouts.length > 0) {
        count += workouts.length;
        entries.append(el("section", { class: "entry-list", "data-key": "workouts" }, el("h2", {}, `Workouts (${workouts.length})`),
          el("ul", {}, ...workouts.map((w) => {
            const shown = w.display !== undefined ? w.display : w.measurement && w.measurement.value !== null
              ? `${w.measurement.value}${w.measurement.unit ? " " + w.measurement.unit : ""}` : "";
            return el("li", {}, el("time", {}, dateText(w.date)), " ", w.description + (shown ? ` — ${shown}` : ""),
              ...(w.details ? [" ", el("span", { class: "details" }, w.details)] : []));
          }))));
      }
      const activity = timeline.activity || [];
      if (activity.length > 0) {
        count += activity.length;
        entries.append(el("section", { class: "entry-list", "data-key": "activity" }, el("h2", {}, "Activity per day"),
          el("table", {}, ...activity.map((a) => el("tr", {}, el("td", {}, a.day), el("td", {}, a.description),
            el("td", { class: "number" }, a.display || numberText(a.total) + (a.unit ? " " + a.unit : "")))))));
      }
      const readings = vitals.vitals.reduce((sum, s) => sum + s.readings, 0);
      const anything = count + readings + levels.length + timeline.timeline_medications.length + timeline.regimens.length;
      status.textContent = anything === 0 ? "Nothing recorded in this range." :
        `${count} records, ${readings} vital-sign readings in this range.`;
      const latest = document.getElementById("latest");
      latest.hidden = !(anything === 0 && state.latest !== null && (state.latest < timeline.start_date || state.latest > timeline.end_date));
    }

    function postedList(parent, title, items, cls, describe) {
      if (!items || items.length === 0) return;
      parent.append(el("h2", {}, title), el("ul", { class: cls }, ...items.map((item) => el("li", {}, describe(item)))));
    }

    // One line chart per vital sign over the whole range, so scopes compare at a glance.
    function chart(series) {
      const width = 480, height = 160, left = 44, right = 10, top = 12, bottom = 24;
      const start = Number(root.dataset.start), finish = Number(root.dataset.end);
      let low = series.min, high = series.max;
      if (low === high) { low -= 1; high += 1; }
      const pad = (high - low) * 0.08;
      low -= pad; high += pad;
      const x = (t) => left + ((t - start) / Math.max(finish - start, 1)) * (width - left - right);
      const y = (v) => top + (1 - (v - low) / (high - low)) * (height - top - bottom);
      const picture = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img" });
      picture.append(svg("rect", { x: left, y: top, width: width - left - right, height: height - top - bottom, class: "plot" }));
      for (const v of [series.min, series.max]) {
        const label = svg("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" });
        label.textContent = numberText(v);
        picture.append(label, svg("line", { x1: left, x2: width - right, y1: y(v), y2: y(v), class: "grid" }));
      }
      for (const [t, anchor] of [[start, "start"], [finish, "end"]]) {
        const label = svg("text", { x: x(t), y: height - 8, "text-anchor": anchor, class: "axis" });
        label.textContent = dateText(t);
        picture.append(label);
      }
      const points = series.points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
      picture.append(svg("polyline", { points, class: "line" }));
      if (series.points.length <= 80) {
        for (const [t, v] of series.points) {
          const dot = svg("circle", { cx: x(t).toFixed(1), cy: y(v).toFixed(1), r: 3, class: "dot" });
          const tip = svg("title", {});
          tip.textContent = `${numberText(v)} ${series.unit || ""} · ${timeText(t)}`;
          dot.append(tip);
          picture.append(dot);
        }
      }
      const last = series.points[series.points.length - 1];
      const heading = el("h3", {}, series.description, " ",
        el("span", { class: "latest" }, `${numberText(last[1])}${series.unit ? " " + series.unit : ""}`),
        el("span", { class: "readings" }, ` · ${series.readings} reading${series.readings === 1 ? "" : "s"}`));
      return el("figure", { class: "vital", "data-description": series.description }, heading, picture);
    }

    for (const link of document.querySelectorAll(".scopes .scope")) {
      link.addEventListener("click", (event) => {
        event.preventDefault();
        state.page = link.dataset.scope;
        load();
      });
    }
    document.getElementById("earlier").addEventListener("click", () => {
      const d = end(); SPANS[state.page](d); state.at = d; load();
    });
    document.getElementById("later").addEventListener("click", () => {
      const d = end(); LATER[state.page](d);
      state.at = d > new Date() ? null : d;
      load();
    });
    document.getElementById("latest").addEventListener("click", () => {
      state.at = new Date(state.latest * 1000 + 1000);
      load();
    });

    // The forms post to timeline.json with the session's CSRF token, then the timeline shows what was saved.
    for (const form of document.querySelectorAll("form.post-form")) {
      for (const range of form.querySelectorAll('input[type="range"]')) {
        range.addEventListener("input", () => { range.nextElementSibling.textContent = range.value; });
      }
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const data = {};
        for (const [name, value] of new FormData(form)) {
          if (name !== "csrf_token" && name !== "return_to" && value !== "") data[name] = value;
        }
        const button = form.querySelector('button[type="submit"]');
        button.disabled = true;
        try {
          const response = await fetch(form.getAttribute("action"), {
            method: "POST", credentials: "same-origin",
            headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
            body: JSON.stringify(data),
          });
          const body = await response.json().catch(() => ({}));
          if (!response.ok) throw new Error(body.error || response.statusText);
          for (const input of form.querySelectorAll("input:not([type=hidden]):not([type=range])")) input.value = "";
          state.at = null; // what was just posted happened now
          await load();
          status.textContent = "Saved. " + status.textContent;
        } catch (error) {
          status.textContent = "Could not save: " + error.message;
        } finally {
          button.disabled = false;
        }
      });
    }

    load();
  }

  // MARK: Lab trends

  // One chart per result code over the range (or each code's own first to last reading): the
  // reference range as a band, readings outside it (or flagged H/L by the lab) marked in red. A flag
  // reads in words ("critically low"), the lab's code beside it in the detail ("LL").
  async function setUpTrends(root) {
    const status = document.getElementById("status");
    const single = root.dataset.code !== "";
    let answer;
    try {
      answer = await getJSON(root.dataset.api);
    } catch (error) {
      status.textContent = "Could not load the results: " + error.message;
      return;
    }
    const charts = document.getElementById("trend-charts");
    charts.replaceChildren(...answer.trends.map((trend) => trendFigure(trend, answer, single)));
    const readings = answer.trends.reduce((sum, t) => sum + t.readings, 0);
    const outside = answer.trends.reduce((sum, t) => sum + t.out_of_range, 0);
    status.textContent = answer.trends.length === 0 ? "No numeric results in this range." :
      `${answer.trends.length} result${answer.trends.length === 1 ? "" : "s"}, ${readings} reading${readings === 1 ? "" : "s"}, ` +
      `${outside} outside the reference range.`;
    root.dataset.loaded = "1";
  }

  const withUnit = (value, unit) => numberText(value) + (unit ? " " + unit : "");
  // "critically low (LL)": the lab's flag in words, its code in brackets.
  const flagText = (p) => p.flag_text && p.flag_text !== p.flag ? `${p.flag_text} (${p.flag})` : p.flag;

  function rangeText(low, high, unit) {
    if (low !== undefined && low !== null && high !== undefined && high !== null) return `${numberText(low)}–${withUnit(high, unit)}`;
    if (low !== undefined && low !== null) return `≥ ${withUnit(low, unit)}`;
    if (high !== undefined && high !== null) return `≤ ${withUnit(high, unit)}`;
    return "";
  }

  function trendFigure(trend, answer, single) {
    const width = 640, height = 200, left = 50, right = 12, top = 12, bottom = 24;
    const start = answer.start_date !== undefined ? answer.start_date : trend.first;
    let finish = answer.end_date !== undefined ? answer.end_date : trend.last;
    const range = trend.reference_range || {};
    const hasLow = range.low !== undefined && range.low !== null, hasHigh = range.high !== undefined && range.high !== null;
    // The scale holds the readings and the reference range, so the band is always in view.
    let low = Math.min(trend.min, hasLow ? range.low : trend.min, hasHigh ? range.high : trend.min);
    let high = Math.max(trend.max, hasHigh ? range.high : trend.max, hasLow ? range.low : trend.max);
    if (low === high) { low -= 1; high += 1; }
    const pad = (high - low) * 0.08;
    low -= pad; high += pad;
    let first = start;
    if (finish <= first) { first -= 43200; finish += 43200; } // one reading: half a day either side
    const x = (t) => left + ((t - first) / Math.max(finish - first, 1)) * (width - left - right);
    const y = (v) => top + (1 - (v - low) / (high - low)) * (height - top - bottom);
    const picture = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img",
      "aria-label": `${trend.description}: ${trend.readings} readings from ${dateText(trend.first)} to ${dateText(trend.last)}` +
        ((hasLow || hasHigh) ? `, reference range ${rangeText(range.low, range.high, trend.unit)}` : "") +
        `, ${trend.out_of_range} outside it` });
    picture.append(svg("rect", { x: left, y: top, width: width - left - right, height: height - top - bottom, class: "plot" }));
    if (hasLow || hasHigh) {
      const bandTop = y(hasHigh ? range.high : high), bandBottom = y(hasLow ? range.low : low);
      const band = svg("rect", { x: left, y: bandTop.toFixed(1), width: width - left - right,
        height: Math.max(bandBottom - bandTop, 1).toFixed(1), class: "reference" });
      const tip = svg("title", {});
      tip.textContent = "Reference range " + rangeText(range.low, range.high, trend.unit);
      band.append(tip);
      picture.append(band);
      for (const bound of [range.low, range.high]) {
        if (bound === undefined || bound === null) continue;
        const label = svg("text", { x: left - 6, y: y(bound) + 4, "text-anchor": "end", class: "axis reference-label" });
        label.textContent = numberText(bound);
        picture.append(label, svg("line", { x1: left, x2: width - right, y1: y(bound), y2: y(bound), class: "reference-line" }));
      }
    }
    for (const [t, anchor] of [[first, "start"], [finish, "end"]]) {
      const label = svg("text", { x: x(t), y: height - 8, "text-anchor": anchor, class: "axis" });
      label.textContent = dateText(t);
      picture.append(label);
    }
    picture.append(svg("polyline", { points: trend.points.map((p) => `${x(p.time).toFixed(1)},${y(p.value).toFixed(1)}`).join(" "), class: "line" }));
    for (const p of trend.points) {
      const outside = p.out_of_range > 0;
      const dot = svg("circle", { cx: x(p.time).toFixed(1), cy: y(p.value).toFixed(1), r: outside ? 4.5 : 3,
        class: outside ? "dot out-of-range" : "dot" });
      if (p.flag) dot.setAttribute("data-flag", p.flag);
      const tip = svg("title", {});
      const parts = [withUnit(p.value, trend.unit), timeText(p.time)];
      if (p.readings > 1) parts.push(`mean of ${p.readings} readings, ${p.out_of_range} outside the range`);
      if (p.flag) parts.push(flagText(p));
      const own = rangeText(p.low, p.high, trend.unit);
      if (own) parts.push("range " + own);
      tip.textContent = parts.join(" · ");
      dot.append(tip);
      picture.append(dot);
      if (outside && p.flag) {
        const mark = svg("text", { x: x(p.time).toFixed(1), y: (y(p.value) - 8).toFixed(1), "text-anchor": "middle", class: "flag" });
        mark.textContent = p.flag_text || p.flag;
        picture.append(mark);
      }
    }
    const last = trend.points[trend.points.length - 1];
    const href = `${base}/patients/${encodeURIComponent(document.getElementById("trends").dataset.patient)}/trends?code=${encodeURIComponent(trend.key)}`;
    const heading = el("h3", {}, single ? trend.description : el("a", { href, class: "trend-title" }, trend.description), " ",
      el("span", { class: "latest" + (last && last.out_of_range > 0 ? " out-of-range" : "") },
        last ? withUnit(last.value, trend.unit) + (last.flag ? ` (${last.flag_text || last.flag})` : "") : ""),
      el("span", { class: "readings" }, ` · ${trend.readings} reading${trend.readings === 1 ? "" : "s"}` +
        (trend.out_of_range > 0 ? `, ${trend.out_of_range} outside the range` : "")));
    const caption = el("p", { class: "reference-text" }, (hasLow || hasHigh) ? "Reference range " + rangeText(range.low, range.high, trend.unit) :
      "No reference range recorded");
    const figure = el("figure", { class: "trend", "data-key": trend.key, "data-unit": trend.unit || "" }, heading, caption, picture);
    if (single) {
      figure.append(el("table", { class: "readings-table" },
        el("tr", {}, el("th", {}, "Date"), el("th", {}, "Value"), el("th", {}, "Reference range"), el("th", {}, "Flag")),
        ...trend.points.slice().reverse().map((p) => el("tr", { class: p.out_of_range > 0 ? "out-of-range" : "" },
          el("td", {}, timeText(p.time)), el("td", { class: "number" }, withUnit(p.value, trend.unit) + (p.readings > 1 ? ` (mean of ${p.readings})` : "")),
          el("td", {}, rangeText(p.low, p.high, trend.unit)), el("td", {}, p.flag ? flagText(p) : (p.out_of_range > 0 ? "outside" : ""))))));
    }
    return figure;
  }


  // MARK: Add a provider: live results from /api/providers (the directory's search), and Copy

  function setUpProviderSearch(form) {
    const results = document.getElementById("provider-results");
    const words = form.querySelector('input[name="q"]');
    const state = form.querySelector('input[name="state"]');
    let timer = null;
    let asked = 0;
    async function refresh() {
      const q = words.value.trim(), st = state.value.trim();
      const mine = ++asked;
      if (!q && !st) { results.replaceChildren(); return; }
      const url = `${base}/api/providers?q=${encodeURIComponent(q)}&state=${encodeURIComponent(st)}&limit=20`;
      let answer;
      try {
        answer = await getJSON(url);
      } catch (error) {
        if (mine === asked) results.replaceChildren(el("p", { class: "empty" }, error.message));
        return;
      }
      if (mine !== asked) return; // a later keystroke's answer wins
      const list = el("ul", { class: "providers" });
      for (const p of answer.providers) {
        const r4 = p.endpoints.some((e) => e.status === "active" && /^4\./.test(e.fhir_version || "")) ? "yes"
          : p.endpoints.length === 0 ? "no endpoint" : p.endpoints.some((e) => /^4\./.test(e.fhir_version || "")) ? "inactive" : "no";
        const meta = [p.portal, [p.city, p.state].filter(Boolean).join(", "), p.vendor].filter(Boolean).join(" · ");
        list.append(el("li", { class: "provider" },
          el("a", { class: "provider-link", href: `${base}/providers/${encodeURIComponent(p.id)}` }, el("span", { class: "name" }, p.name)),
          " ", el("span", { class: "meta" }, meta), " ", el("span", { class: "r4" }, "R4: " + r4)));
      }
      results.replaceChildren(answer.providers.length ? list : el("p", { class: "empty" }, "No provider matches; try fewer words."));
      const address = `${base}/providers?q=${encodeURIComponent(q)}` + (st ? `&state=${encodeURIComponent(st)}` : "");
      history.replaceState(null, "", address);
    }
    for (const input of [words, state]) {
      input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(refresh, 150); });
    }
  }

  function setUpCopyButtons() {
    for (const button of document.querySelectorAll("button.copy[data-copy]")) {
      button.addEventListener("click", async () => {
        const source = document.getElementById(button.getAttribute("data-copy"));
        if (!source) return;
        try {
          await navigator.clipboard.writeText(source.textContent);
          button.textContent = "Copied";
        } catch (error) {
          const range = document.createRange(); // no clipboard (not a secure context): select it for Ctrl-C
          range.selectNodeContents(source);
          const selection = window.getSelection();
          selection.removeAllRanges();
          selection.addRange(range);
          button.textContent = "Selected: press Ctrl-C";
        }
      });
    }
  }

  // MARK: A provider login's page: follow the login (GET /api/providers/logins/ID) and reload when its phase changes

  function setUpProviderLogin(root) {
    const shown = root.dataset.phase;
    // Only the phases the server moves on from; the question waits for the person.
    if (!["starting", "waiting", "storing"].includes(shown)) return;
    async function check() {
      let phase;
      try {
        phase = (await getJSON(root.dataset.api)).login.phase;
      } catch (error) {
        location.reload(); // the login ended (its five minutes are over): the page says so
        return;
      }
      if (phase !== shown) location.reload();
      else setTimeout(check, 1000);
    }
    setTimeout(check, 1000);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const providerSearch = document.getElementById("provider-search");
    if (providerSearch) setUpProviderSearch(providerSearch);
    const providerLogin = document.getElementById("provider-login");
    if (providerLogin) setUpProviderLogin(providerLogin);
    setUpCopyButtons();
    const root = document.getElementById("timeline");
    if (root) setUpTimeline(root);
    const trends = document.getElementById("trends");
    if (trends) setUpTrends(trends);
  });
})();
