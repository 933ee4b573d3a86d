// flame_test.mjs - checks a flame graph page in headless Chromium.
//
//   node flame_test.mjs PAGE.html SPEC.json SCREENSHOT.png
//
// SPEC says what a known profile must look like:
//   { "frames": { "name": [fraction of the chart's width, ...], ... },
//     "zoom":   { "click": "name", "frames": { ... }, "gone": ["name", ...] },
//     "search": [ { "query": "...", "regex": false, "share": "35.0%",
//                   "matches": ["name", ...] }, ... ],
//     "hover":  { "name": "...", "details": ["text", ...] },
//     "kinds":  { "name": "user" | "kernel" | "missing" | "other", ... } }
// or { "empty": true } for a profile without samples (a message, no graph).
// Every frame of that name on screen is measured; the widths must equal the
// listed fractions (in any order). Prints TAP lines like tests/lib.sh.
import { ok, notok, failed, launch } from './tap.mjs';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [page_path, spec_path, shot_path] = process.argv.slice(2);
if (!page_path || !spec_path || !shot_path) {
	console.error('usage: node flame_test.mjs PAGE.html SPEC.json SCREENSHOT.png');
	process.exit(2);
}
const spec = JSON.parse(readFileSync(spec_path, 'utf8'));
const TOL = 0.002;		// of the chart's width: ~2px at 1200px


// the widths of every frame on screen, by name, as fractions of the chart
async function widths(page) {
	return page.evaluate(() => {
		const chart = document.getElementById('chart');
		const cw = chart.getBoundingClientRect().width;
		const out = {};
		for (const el of chart.querySelectorAll('.f')) {
			const name = el.textContent;
			if (!name)
				continue;
			(out[name] = out[name] || []).push(el.getBoundingClientRect().width / cw);
		}
		return out;
	});
}

function same_fractions(got, want) {
	if (!got || got.length !== want.length)
		return false;
	const g = [...got].sort((a, b) => a - b), w = [...want].sort((a, b) => a - b);
	return g.every((x, i) => Math.abs(x - w[i]) <= TOL);
}

function check_frames(what, got, want) {
	for (const [name, fractions] of Object.entries(want)) {
		if (same_fractions(got[name], fractions))
			ok(`${what}: ${name} is ${fractions.map((f) => (100 * f).toFixed(1) + '%').join(', ')} wide`);
		else
			notok(`${what}: ${name} width`, `expected ${JSON.stringify(fractions)}, got ${JSON.stringify(got[name])}`);
	}
}

async function click_frame(page, name) {
	const el = page.locator('#chart .f', { hasText: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }).first();
	await el.click();
}

const browser = await launch();
try {
	const page = await browser.newPage({ viewport: { width: 1200, height: 640 } });
	const errors = [];
	const requests = [];
	page.on('pageerror', (e) => errors.push(e.message));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });

	await page.goto(pathToFileURL(page_path).href);
	if (spec.empty) {
		await page.waitForSelector('#chart #error', { timeout: 10000 });
		const msg = await page.textContent('#chart #error');
		if (/no samples/.test(msg) && !errors.length)
			ok(`a profile without samples says so: "${msg}"`);
		else
			notok('a profile without samples', `message "${msg}", errors ${errors.join('; ')}`);
		await page.screenshot({ path: shot_path });
		process.exitCode = failed() ? 1 : 0;
	} else {
		await run(page, errors, requests);
	}
} finally {
	await browser.close();
}
process.exit(failed() ? 1 : 0);

async function run(page, errors, requests) {
	await page.waitForSelector('#chart .f', { timeout: 10000 });
	if (errors.length)
		notok('page loads without script errors', errors.join('\n'));
	else
		ok('page loads without script errors');

	const total = await page.evaluate(() => window.callstitchFlame && window.callstitchFlame.total);
	if (spec.samples !== undefined) {
		if (total === spec.samples)
			ok(`page shows ${spec.samples} samples`);
		else
			notok('page sample total', `expected ${spec.samples}, got ${total}`);
	}

	check_frames('whole profile', await widths(page), spec.frames);

	// kinds: user frames warm, kernel blue, the missing-stack marker violet,
	// process/event sand (hue ranges of flame_template.js's colour())
	const HUES = { other: [40, 60], user: [0, 55], kernel: [180, 225], missing: [270, 290] };
	const KIND = { other: 0, user: 1, kernel: 2, missing: 3 };
	for (const [name, kind] of Object.entries(spec.kinds || {})) {
		const got = await page.evaluate((n) => {
			const el = [...document.querySelectorAll('#chart .f')].find((e) => e.textContent === n);
			if (!el)
				return null;
			const [r, g, b] = getComputedStyle(el).backgroundColor.match(/\d+/g).map((v) => v / 255);
			const max = Math.max(r, g, b), min = Math.min(r, g, b), d = max - min;
			let h = 0;
			if (d) {
				if (max === r) h = ((g - b) / d + 6) % 6;
				else if (max === g) h = (b - r) / d + 2;
				else h = (r - g) / d + 4;
			}
			return { cls: el.className, hue: Math.round(h * 60) };
		}, name);
		const [lo, hi] = HUES[kind];
		if (got && got.cls.split(' ').includes('k' + KIND[kind]) && got.hue >= lo && got.hue <= hi)
			ok(`${name} is drawn as a ${kind} frame (hue ${got.hue})`);
		else
			notok(`${name} is drawn as a ${kind} frame`, JSON.stringify(got));
	}

	if (spec.hover) {
		const el = page.locator('#chart .f', { hasText: spec.hover.name }).first();
		await el.hover();
		const details = await page.textContent('#details');
		const tipShown = await page.evaluate(() => !document.getElementById('tip').hidden);
		const missing = spec.hover.details.filter((t) => !details.includes(t));
		if (!missing.length && tipShown)
			ok(`hover on ${spec.hover.name} shows its details`);
		else
			notok(`hover on ${spec.hover.name}`, `details "${details}", tooltip shown ${tipShown}, missing ${JSON.stringify(missing)}`);
	}

	if (spec.zoom) {
		await click_frame(page, spec.zoom.click);
		const got = await widths(page);
		check_frames(`zoomed on ${spec.zoom.click}`, got, spec.zoom.frames);
		const still = (spec.zoom.gone || []).filter((n) => got[n]);
		if (still.length)
			notok(`zoomed on ${spec.zoom.click}: frames outside it are hidden`, `still shown: ${still.join(', ')}`);
		else
			ok(`zoomed on ${spec.zoom.click}: frames outside it are hidden`);
		const dimmed = await page.evaluate(() => document.querySelectorAll('#chart .f.a').length);
		if (dimmed === spec.zoom.ancestors)
			ok(`zoomed on ${spec.zoom.click}: ${dimmed} ancestors shown dimmed`);
		else
			notok('zoom ancestors', `expected ${spec.zoom.ancestors} dimmed ancestors, got ${dimmed}`);

		await page.click('#reset');
		check_frames('after reset', await widths(page), spec.frames);
	}

	for (const s of spec.search || []) {
		if ((await page.isChecked('#regex')) !== !!s.regex)
			await page.click('#regex');
		await page.fill('#search', s.query);
		await page.press('#search', 'Enter');
		const share = await page.textContent('#matched');
		const matches = await page.evaluate(() =>
			[...document.querySelectorAll('#chart .f.m')].map((el) => el.textContent).sort());
		const what = `search ${s.regex ? 'regex' : 'substring'} "${s.query}"`;
		if (share.includes(s.share))
			ok(`${what} shows a share of ${s.share}`);
		else
			notok(`${what} share`, `expected "${s.share}" in "${share}"`);
		const want = [...s.matches].sort();
		if (JSON.stringify(matches) === JSON.stringify(want))
			ok(`${what} highlights ${want.length} frames`);
		else
			notok(`${what} highlights`, `expected ${JSON.stringify(want)}, got ${JSON.stringify(matches)}`);
	}

	// the icicle toggle puts the root on top; flame puts it at the bottom
	const rootTop = () => page.evaluate(() => {
		const els = [...document.querySelectorAll('#chart .f')];
		const root = els.find((el) => el.getAttribute('data-i') === '0');
		const tops = els.map((el) => el.getBoundingClientRect().top);
		return { root: root.getBoundingClientRect().top, min: Math.min(...tops), max: Math.max(...tops) };
	});
	let t = await rootTop();
	if (t.root === t.max && t.max > t.min)
		ok('flame mode: the root is the bottom row');
	else
		notok('flame mode root row', JSON.stringify(t));
	await page.click('#mode');
	t = await rootTop();
	if (t.root === t.min && t.max > t.min)
		ok('icicle mode: the root is the top row');
	else
		notok('icicle mode root row', JSON.stringify(t));
	await page.click('#mode');

	if (spec.screenshot_search) {
		await page.fill('#search', spec.screenshot_search);
		await page.press('#search', 'Enter');
	} else {
		await page.click('#reset');
	}
	await page.mouse.move(0, 0);
	if (spec.screenshot_hover) {
		const el = page.locator('#chart .f', { hasText: spec.screenshot_hover }).first();
		await el.hover();
	}
	await page.screenshot({ path: shot_path, fullPage: false });
	ok(`screenshot written to ${shot_path}`);

	if (requests.length)
		notok('page makes no network requests', requests.join('\n'));
	else
		ok('page makes no network requests');
	if (errors.length)
		notok('no script errors during the test', errors.join('\n'));
	else
		ok('no script errors during the test');
}
