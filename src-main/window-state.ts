/**
 * The main window's size, position and maximized state, remembered between runs and
 * clamped to the displays connected now (a window saved on an unplugged monitor comes
 * back centred on the primary one, not off-screen).
 */
import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import type { Clock } from "./clock.js";
import { writeFileAtomic } from "./write-file-atomic.js";

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface WindowState {
  /** Absent: let the system centre the window. */
  x?: number;
  y?: number;
  width: number;
  height: number;
  maximized: boolean;
}

export const MIN_WINDOW_SIZE = { width: 800, height: 560 } as const;
export const DEFAULT_WINDOW_STATE: WindowState = { width: 1280, height: 840, maximized: false };
/** How much of the window (px in each direction) must be on a display to keep its position. */
const MIN_VISIBLE = 100;

const coordinate = z.number().int().min(-100_000).max(100_000);
const StateSchema = z.object({
  x: coordinate.optional(),
  y: coordinate.optional(),
  width: z.number().int().min(1).max(100_000),
  height: z.number().int().min(1).max(100_000),
  maximized: z.boolean(),
});

/** The saved state, or the default when there is none or it is invalid. */
export function loadWindowState(file: string): WindowState {
  if (!existsSync(file)) return { ...DEFAULT_WINDOW_STATE };
  try {
    const state = StateSchema.parse(JSON.parse(readFileSync(file, "utf8")));
    // A position needs both coordinates.
    return state.x === undefined || state.y === undefined ? { width: state.width, height: state.height, maximized: state.maximized } : state;
  } catch {
    return { ...DEFAULT_WINDOW_STATE };
  }
}

export function saveWindowState(file: string, state: WindowState): void {
  writeFileAtomic(file, JSON.stringify(state));
}

const clamp = (value: number, min: number, max: number) => Math.max(min, Math.min(value, max));

function overlap(a: Rect, b: Rect): { width: number; height: number } {
  return {
    width: Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x),
    height: Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y),
  };
}

function fitSize(state: WindowState, area: Rect): { width: number; height: number } {
  return {
    width: Math.min(area.width, Math.max(state.width, MIN_WINDOW_SIZE.width)),
    height: Math.min(area.height, Math.max(state.height, MIN_WINDOW_SIZE.height)),
  };
}

/**
 * `state` made to fit the displays' work areas: kept on the display it overlaps most
 * (moved fully inside it, shrunk if larger), or centred on `primary` when too little of
 * it would be visible anywhere.
 */
export function clampToDisplays(state: WindowState, workAreas: Rect[], primary: Rect): WindowState {
  const { maximized } = state;
  if (state.x === undefined || state.y === undefined) return { ...fitSize(state, primary), maximized };
  const rect = { x: state.x, y: state.y, width: state.width, height: state.height };
  let best: { area: Rect; size: number } | null = null;
  for (const area of workAreas) {
    const o = overlap(rect, area);
    if (o.width < Math.min(MIN_VISIBLE, rect.width) || o.height < Math.min(MIN_VISIBLE, rect.height)) continue;
    if (!best || o.width * o.height > best.size) best = { area, size: o.width * o.height };
  }
  if (!best) return { ...fitSize(state, primary), maximized };
  const { area } = best;
  const size = fitSize(state, area);
  return {
    x: clamp(state.x, area.x, area.x + area.width - size.width),
    y: clamp(state.y, area.y, area.y + area.height - size.height),
    ...size,
    maximized,
  };
}

/** The part of a BrowserWindow tracked here. */
export interface TrackedWindow {
  /** Bounds when neither maximized nor minimized. */
  getNormalBounds(): Rect;
  isMaximized(): boolean;
  on(event: "resize" | "move" | "maximize" | "unmaximize" | "close", listener: () => void): unknown;
}

/**
 * Saves the window's state `delayMs` after it stops moving or resizing, and at once when
 * it closes. Returns `flush()` to save now.
 */
export function trackWindowState(win: TrackedWindow, save: (state: WindowState) => void, clock: Clock, delayMs = 500): { flush(): void } {
  let timer: unknown = null;
  const flush = () => {
    if (timer !== null) clock.clearTimeout(timer);
    timer = null;
    save({ ...win.getNormalBounds(), maximized: win.isMaximized() });
  };
  const later = () => {
    if (timer !== null) clock.clearTimeout(timer);
    timer = clock.setTimeout(flush, delayMs);
  };
  for (const event of ["resize", "move", "maximize", "unmaximize"] as const) win.on(event, later);
  win.on("close", flush);
  return { flush };
}
