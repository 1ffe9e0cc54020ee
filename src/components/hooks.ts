import { ISignal } from '@lumino/signaling';
import * as React from 'react';

/**
 * Re-render when any of the signals fires; bursts (streamed deltas) collapse into one render per frame.
 */
export function useSignals(
  signals: ReadonlyArray<ISignal<any, any> | null | undefined>
): void {
  const [, setVersion] = React.useState(0);
  React.useEffect(() => {
    let frame = 0;
    const onChange = () => {
      if (frame === 0) {
        frame = requestAnimationFrame(() => {
          frame = 0;
          setVersion(version => version + 1);
        });
      }
    };
    const connected = signals.filter(
      (signal): signal is ISignal<any, any> => !!signal
    );
    connected.forEach(signal => signal.connect(onChange));
    return () => {
      cancelAnimationFrame(frame);
      connected.forEach(signal => signal.disconnect(onChange));
    };
  }, signals);
}

/**
 * Seconds since a server timestamp (seconds), ticking every second while `active`.
 */
export function useElapsed(
  since: number | null,
  active: boolean
): number | null {
  const [now, setNow] = React.useState(() => Date.now());
  React.useEffect(() => {
    if (!active) {
      return;
    }
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [active]);
  if (since === null) {
    return null;
  }
  return Math.max(0, now / 1000 - since);
}
