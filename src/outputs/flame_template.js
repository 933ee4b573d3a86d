/* flame_template.js - the interactive part of the flame graph page.
 *
 * The data (see flame.h) is a string table, a frame table of
 * (name, dso, kind) triples and the call tree as (frame, samples, children)
 * triples in preorder. It is unpacked once into typed arrays; every redraw
 * walks only the frames wide enough to see (a narrow frame's subtree is
 * skipped whole), so a profile with a million tree nodes stays responsive.
 *
 * A differential graph also carries, per node, the baseline profile's
 * samples on the same path ("base"): the shape stays the new profile's and
 * each frame is coloured by how its share changed, red for growth, blue
 * for shrinkage, the deeper the larger.
 */
(function () {
	'use strict';

	var KIND_NAMES = ['process / event', 'user', 'kernel', 'user stack missing'];
	var MIN_PX = 0.4;	/* narrower frames are not drawn */
	var TEXT_PX = 18;	/* narrower frames get no label */

	var chart = document.getElementById('chart');
	var details = document.getElementById('details');
	var tip = document.getElementById('tip');
	var searchBox = document.getElementById('search');
	var regexBox = document.getElementById('regex');
	var matchedOut = document.getElementById('matched');
	var modeButton = document.getElementById('mode');

	function fail(msg) {
		chart.innerHTML = '<div id="error"></div>';
		chart.firstChild.textContent = 'Cannot show this profile: ' + msg;
		throw new Error(msg);
	}

	var D;
	try {
		D = JSON.parse(document.getElementById('flame-data').textContent);
	} catch (e) {
		fail('the embedded data is not valid JSON (' + e.message + ')');
	}
	if (!D || D.v !== 1 || !D.strings || !D.frames || !D.nodes)
		fail('the embedded data is not version 1 of the format');

	var S = D.strings, F = D.frames, T = D.nodes;
	var n = Math.floor(T.length / 3);
	if (n < 1 || T.length % 3 || F.length % 3)
		fail('the tree has ' + T.length + ' entries, not whole triples');

	var frame = new Int32Array(n);
	var value = new Float64Array(n);
	var start = new Float64Array(n);	/* samples left of the node */
	var parent = new Int32Array(n);
	var depth = new Int32Array(n);
	var end = new Int32Array(n);		/* one past the node's subtree */
	var maxDepth = 0;

	(function unpack() {
		var st = [], rem = [], cur = [];
		for (var i = 0; i < n; i++) {
			var f = T[3 * i], v = T[3 * i + 1], nch = T[3 * i + 2];
			if (!(f >= 0 && 3 * f < F.length))
				fail('node ' + i + ' names frame ' + f + ', which does not exist');
			frame[i] = f;
			value[i] = v;
			var d = st.length;
			if (d) {
				if (i && !rem[d - 1])
					fail('node ' + i + ' has no parent');
				parent[i] = st[d - 1];
				start[i] = cur[d - 1];
				cur[d - 1] += v;
				rem[d - 1]--;
			} else {
				if (i)
					fail('node ' + i + ' is a second root');
				parent[i] = -1;
				start[i] = 0;
			}
			depth[i] = d;
			if (d > maxDepth)
				maxDepth = d;
			st.push(i);
			rem.push(nch);
			cur.push(start[i]);
			while (st.length && rem[st.length - 1] === 0) {
				end[st.pop()] = i + 1;
				rem.pop();
				cur.pop();
			}
		}
		if (st.length)
			fail('the tree ends inside node ' + st[st.length - 1]);
	})();

	var total = value[0];

	var base = null, baseTotal = 0, maxDelta = 0;
	if (D.base) {
		if (D.base.length !== n)
			fail('the baseline has ' + D.base.length + ' values for ' + n + ' nodes');
		base = Float64Array.from(D.base);
		baseTotal = base[0];
	}
	/* a node's change in share of all, in percentage points */
	function delta(i) {
		return (total ? 100 * value[i] / total : 0) -
			(baseTotal ? 100 * base[i] / baseTotal : 0);
	}
	if (base)
		for (var d = 1; d < n; d++)
			maxDelta = Math.max(maxDelta, Math.abs(delta(d)));
	function points(p) {
		return (p >= 0 ? '+' : '\u2212') + Math.abs(p).toFixed(2) + ' points';
	}
	function diffColour(i) {
		var p = delta(i), t = maxDelta ? Math.min(1, Math.abs(p) / maxDelta) : 0;
		if (Math.abs(p) < 0.005)
			return 'hsl(0,0%,92%)';
		return 'hsl(' + (p > 0 ? 0 : 218) + ',80%,' + (94 - 42 * t).toFixed(1) + '%)';
	}

	function name(i) { return S[F[3 * frame[i]]]; }
	function dso(i) { var s = F[3 * frame[i] + 1]; return s >= 0 ? S[s] : ''; }
	function kind(i) { return F[3 * frame[i] + 2]; }

	function esc(s) {
		return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;')
			.replace(/>/g, '&gt;').replace(/"/g, '&quot;');
	}
	function num(v) { return Math.round(v).toLocaleString('en-US'); }

	/* the values are samples, or nanoseconds off the CPU (meta.unit "ns") */
	var OFF_CPU = !!(D.meta && D.meta.unit === 'ns');
	function secs(ns) {
		var s = ns / 1e9;
		if (s >= 1)
			return s.toFixed(3) + ' s';
		if (s >= 1e-3)
			return (s * 1e3).toFixed(3) + ' ms';
		return (s * 1e6).toFixed(1) + ' \u00b5s';
	}
	function amount(v) {
		return OFF_CPU ? secs(v) + ' off-CPU' : num(v) + ' samples';
	}
	function pct(part, whole) {
		if (!whole)
			return '0%';
		var p = 100 * part / whole;
		return (p >= 10 || p === 0 ? p.toFixed(1) : p.toPrecision(2)) + '%';
	}

	/* a stable colour per frame: the kind picks the hue range, the name
	 * a shade inside it, so one function looks the same everywhere */
	var colours = new Array(F.length / 3);
	function colour(f) {
		var c = colours[f];
		if (c)
			return c;
		var s = S[F[3 * f]], h = 2166136261;
		for (var j = 0; j < s.length; j++)
			h = Math.imul(h ^ s.charCodeAt(j), 16777619);
		var r = ((h >>> 0) % 1000) / 1000;
		switch (F[3 * f + 2]) {
		case 1: c = 'hsl(' + (8 + 42 * r).toFixed(0) + ',' + (72 + 18 * r).toFixed(0) + '%,' + (58 + 10 * r).toFixed(0) + '%)'; break;
		case 2: c = 'hsl(' + (188 + 30 * r).toFixed(0) + ',55%,' + (58 + 12 * r).toFixed(0) + '%)'; break;
		case 3: c = 'hsl(280,18%,72%)'; break;
		default: c = 'hsl(48,' + (20 + 10 * r).toFixed(0) + '%,' + (78 + 6 * r).toFixed(0) + '%)';
		}
		colours[f] = c;
		return c;
	}

	var zoom = 0;
	var icicle = false;
	var matched = null;	/* Uint8Array per node while a search is on */

	function render() {
		if (!total) {
			chart.innerHTML = '<div id="error">This profile has no samples.</div>';
			chart.style.height = 'auto';
			return;
		}
		var W = chart.clientWidth || 1000;
		var zv = value[zoom] || 1, zs = start[zoom];
		var minFrac = MIN_PX / W;
		var items = [], i, e, a;
		var deepest = depth[zoom];

		for (a = parent[zoom]; a >= 0; a = parent[a])
			items.push(a);
		for (i = zoom, e = end[zoom]; i < e;) {
			if (value[i] / zv < minFrac) {
				i = end[i];
				continue;
			}
			items.push(i);
			if (depth[i] > deepest)
				deepest = depth[i];
			i++;
		}

		var row = parseFloat(getComputedStyle(chart).getPropertyValue('--row')) || 17;
		var html = [];
		for (var k = 0; k < items.length; k++) {
			i = items[k];
			var anc = depth[i] < depth[zoom];
			var x = anc ? 0 : (start[i] - zs) / zv;
			var w = anc ? 1 : value[i] / zv;
			var top = (icicle ? depth[i] : deepest - depth[i]) * row;
			var cls = 'f k' + kind(i);
			if (anc)
				cls += ' a';
			if (i === zoom)
				cls += ' z';
			if (w * W < 3)
				cls += ' n';
			if (matched && matched[i])
				cls += ' m';
			html.push('<div class="', cls, '" data-i="', i, '" style="left:',
				  (100 * x).toFixed(6), '%;width:', (100 * w).toFixed(6),
				  '%;top:', top, 'px;background-color:',
				  base ? diffColour(i) : colour(frame[i]), '">',
				  w * W >= TEXT_PX ? esc(name(i)) : '', '</div>');
		}
		chart.style.height = ((deepest + 1) * row) + 'px';
		chart.innerHTML = html.join('');
		chart.classList.toggle('searching', !!matched);
		chart.setAttribute('data-zoom', zoom);
		chart.setAttribute('data-mode', icicle ? 'icicle' : 'flame');
	}

	function describe(i) {
		var self = value[i];
		for (var c = i + 1; c < end[i]; c = end[c])
			self -= value[c];
		var s = name(i) + (dso(i) ? '  (' + dso(i) + ')' : '') + '  \u2014  ' +
			KIND_NAMES[kind(i)] + ', ' + amount(value[i]) + ', ' +
			pct(value[i], total) + ' of all';
		if (zoom && depth[i] >= depth[zoom])
			s += ', ' + pct(value[i], value[zoom]) + ' of zoomed';
		s += '; self ' + (OFF_CPU ? secs(self) : num(self)) + ' (' +
			pct(self, total) + ')';
		if (base)
			s += '; was ' + pct(base[i], baseTotal) + ' of all, ' + points(delta(i));
		return s;
	}

	function nodeOf(target) {
		var el = target && target.closest ? target.closest('.f') : null;
		return el ? parseInt(el.getAttribute('data-i'), 10) : -1;
	}

	chart.addEventListener('mousemove', function (ev) {
		var i = nodeOf(ev.target);
		if (i < 0) {
			tip.hidden = true;
			return;
		}
		details.textContent = describe(i);
		tip.innerHTML = '<b>' + esc(name(i)) + '</b><br>' + esc(amount(value[i]) + ', ' +
			pct(value[i], total) + (base ? ', ' + points(delta(i)) : '') +
			(dso(i) ? '  \u2014  ' + dso(i) : ''));
		tip.hidden = false;
		var x = ev.clientX + 14, y = ev.clientY + 16;
		if (x + tip.offsetWidth > window.innerWidth - 4)
			x = Math.max(4, ev.clientX - tip.offsetWidth - 10);
		if (y + tip.offsetHeight > window.innerHeight - 30)
			y = ev.clientY - tip.offsetHeight - 10;
		tip.style.left = x + 'px';
		tip.style.top = y + 'px';
	});
	chart.addEventListener('mouseleave', function () { tip.hidden = true; });
	chart.addEventListener('click', function (ev) {
		var i = nodeOf(ev.target);
		if (i < 0)
			return;
		zoom = i;
		render();
		showMatches();
		details.textContent = describe(i);
	});

	function reset() {
		zoom = 0;
		searchBox.value = '';
		searchBox.classList.remove('bad');
		matched = null;
		render();
		showMatches();
		details.textContent = 'Hover over a frame for details; click to zoom.';
	}
	document.getElementById('reset').addEventListener('click', reset);

	modeButton.addEventListener('click', function () {
		icicle = !icicle;
		modeButton.textContent = icicle ? 'Flame' : 'Icicle';
		render();
	});

	/* Samples under matching frames, each stack counted once even when
	 * several of its frames match: a match's subtree is skipped whole. */
	function matchedSamples(from) {
		var sum = 0;
		for (var i = from, e = end[from]; i < e;) {
			if (matched[i]) {
				sum += value[i];
				i = end[i];
			} else {
				i++;
			}
		}
		return sum;
	}

	function showMatches() {
		if (!matched) {
			matchedOut.textContent = '';
			return;
		}
		var all = matchedSamples(0);
		var s = 'Matched: ' + pct(all, total) + ' of all ' +
			(OFF_CPU ? 'off-CPU time (' + secs(all) : 'samples (' + num(all)) + ')';
		if (zoom) {
			var inZoom = value[zoom];
			for (var a = zoom; a >= 0; a = parent[a])
				if (matched[a])
					break;
			if (a < 0)
				inZoom = matchedSamples(zoom);
			s += ', ' + pct(inZoom, value[zoom]) + ' of the zoomed frame';
		}
		matchedOut.textContent = s;
	}

	function search() {
		var q = searchBox.value, test;
		searchBox.classList.remove('bad');
		if (!q) {
			matched = null;
			render();
			showMatches();
			return;
		}
		if (regexBox.checked) {
			var re;
			try {
				re = new RegExp(q);
			} catch (e) {
				searchBox.classList.add('bad');
				matchedOut.textContent = 'invalid regular expression';
				return;
			}
			test = function (s) { return re.test(s); };
		} else {
			var lq = q.toLowerCase();
			test = function (s) { return s.toLowerCase().indexOf(lq) >= 0; };
		}
		var nf = F.length / 3, fm = new Uint8Array(nf);
		for (var f = 0; f < nf; f++)
			fm[f] = test(S[F[3 * f]]) ? 1 : 0;
		matched = new Uint8Array(n);
		for (var i = 0; i < n; i++)
			matched[i] = fm[frame[i]];
		render();
		showMatches();
	}

	var searchTimer = 0;
	searchBox.addEventListener('input', function () {
		clearTimeout(searchTimer);
		searchTimer = setTimeout(search, 120);
	});
	searchBox.addEventListener('keydown', function (ev) {
		if (ev.key === 'Enter') {
			clearTimeout(searchTimer);
			search();
		}
	});
	regexBox.addEventListener('change', search);

	document.addEventListener('keydown', function (ev) {
		if ((ev.key === '/' && document.activeElement !== searchBox) ||
		    (ev.key === 'f' && (ev.ctrlKey || ev.metaKey))) {
			ev.preventDefault();
			searchBox.focus();
			searchBox.select();
		} else if (ev.key === 'Escape') {
			reset();
		}
	});

	var resizeTimer = 0;
	window.addEventListener('resize', function () {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(render, 100);
	});

	(function showMeta() {
		var m = D.meta || {}, parts = [amount(total)];
		if (m.events)
			parts[0] += ' of ' + m.events;
		if (m.host)
			parts.push(m.host + (m.os_release ? ' (' + m.os_release + ')' : ''));
		if (m.deferred)
			parts.push(num(m.stitched) + ' stitched, ' + num(m.stitched_late) +
				   ' stitched late, ' + num(m.kernel_only) + ' without user stack');
		if (base)
			parts.push('against ' + (m.base_title || 'the baseline') + ' (' +
				   amount(baseTotal) + '): red grew, blue shrank');
		if (m.cmdline)
			parts.push(m.cmdline);
		document.getElementById('meta').textContent = parts.join('  \u00b7  ');
	})();

	/* for tests and the curious: the unpacked tree and the controls */
	window.callstitchFlame = {
		total: total,
		nodes: n,
		name: name,
		value: function (i) { return value[i]; },
		base: function (i) { return base ? base[i] : null; },
		delta: function (i) { return base ? delta(i) : null; },
		zoom: function (i) { zoom = i; render(); showMatches(); },
		find: function (s) {
			var r = [];
			for (var i = 0; i < n; i++)
				if (name(i) === s)
					r.push(i);
			return r;
		}
	};

	render();
})();
