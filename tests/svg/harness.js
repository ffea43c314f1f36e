// SPDX-License-Identifier: MIT
// Runs inside tests/svg/check.sh's copy of the flame graph, after the
// graph's own script (which has already run init()). Drives the graph the way
// a user would (hover, click, search, reset) through dispatched DOM events and
// the graph's search() function, and writes "fgcheck: key=value" lines into
// the element with id "result" for chromium --dump-dom to print. TARGET and
// TERM are set by check.sh.
(function () {
	var lines = [];
	function put(k, v) { lines.push("fgcheck: " + k + "=" + v); }
	function name(g) { return g.children[0].textContent.replace(/ \(\d+ samples?, [\d.]+%\)$/, ""); }
	function rect(g) { return g.children[1]; }
	function width(g) { return +rect(g).getAttribute("width"); }
	function fire(el, type) { el.dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true, view: window })); }
	function count(gs, f) { return gs.filter(f).length; }
	try {
		var frames = document.getElementById("frames");
		var gs = Array.prototype.slice.call(frames.children);
		var root = gs[0], hot = null, share = 0;
		gs.forEach(function (g) {
			if (name(g) !== TARGET) return;
			share += width(g);
			if (!hot || width(g) > width(hot)) hot = g;
		});
		put("frames", gs.length);
		put("root_width", width(root));
		if (!hot) throw new Error("no frame named " + TARGET);
		put("target_share", (100 * share / width(root)).toFixed(2));
		put("target_width", width(hot));

		fire(rect(hot), "mouseover");
		put("details", document.getElementById("details").textContent);
		fire(rect(hot), "mouseout");

		fire(rect(hot), "click");
		put("zoomed_width", width(hot));
		put("zoomed_x", rect(hot).getAttribute("x"));
		put("zoomed_label", hot.children[2].textContent);
		put("root_is_parent", root.classList.contains("parent"));
		put("root_width_zoomed", width(root));
		put("hidden_zoomed", count(gs, function (g) { return g.classList.contains("hide"); }));
		put("unzoom_shown", !document.getElementById("unzoom").classList.contains("hide"));
		search(TERM);
		put("matched_zoomed", document.getElementById("matched").textContent);

		fire(document.getElementById("unzoom"), "click");
		put("unzoomed_width", width(hot));
		put("hidden_unzoomed", count(gs, function (g) { return g.classList.contains("hide"); }));
		put("matched", document.getElementById("matched").textContent);
		put("highlighted", count(gs, function (g) { return rect(g).getAttribute("fill") === "rgb(230,0,230)"; }));
		put("highlighted_names", gs.filter(function (g) {
			return rect(g).getAttribute("fill") === "rgb(230,0,230)";
		}).map(name).filter(function (n, i, a) { return a.indexOf(n) === i; }).sort().join(","));
		fire(document.getElementById("search"), "click"); // "Reset Search"
		put("highlighted_after_reset", count(gs, function (g) { return rect(g).getAttribute("fill") === "rgb(230,0,230)"; }));
		put("done", 1);
	} catch (e) {
		put("error", String(e).replace(/\n/g, " "));
	}
	document.getElementById("result").textContent = "\n" + lines.join("\n") + "\n";
})();
