import { useEffect, useState } from 'preact/hooks';
import { hq } from '../../api.js';

/** GET /hq-api/api/devices, what the pages show of a box: its name (what it sent at enrolment) and venue. */
interface DeviceRef {
  id: string;
  name: string | null;
}

let known: Promise<DeviceRef[]> | undefined;

/**
 * A box's name by its id ("venue-box 0.1.0 · 8ed0f26f"), read once per page load; the id alone until the list
 * came (or if the read failed: the id is what the API gave).
 */
export function useDeviceName(): (id: string) => string {
  const [devices, setDevices] = useState<DeviceRef[]>([]);
  useEffect(() => {
    known ??= hq.get<DeviceRef[]>('/devices').catch(() => {
      known = undefined;
      return [];
    });
    let live = true;
    void known.then((d) => live && setDevices(d));
    return () => {
      live = false;
    };
  }, []);
  return (id) => {
    const name = devices.find((d) => d.id === id)?.name;
    return name ? `${name} · ${id.slice(0, 8)}` : id;
  };
}
