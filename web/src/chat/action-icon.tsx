/** The message actions' icons: inline SVG in the text colour (no icon font to download), hidden from assistive tech. */
export type ActionIconName = 'seen' | 'pin' | 'regenerate' | 'edit' | 'branch' | 'delete';

const PATHS: Record<ActionIconName, string[]> = {
  seen: ['M1.5 8s2.4-4.5 6.5-4.5S14.5 8 14.5 8s-2.4 4.5-6.5 4.5S1.5 8 1.5 8z', 'M8 6a2 2 0 1 0 0 4 2 2 0 0 0 0-4z'],
  pin: ['M5.5 2h5', 'M6.5 2v4L4 8.5h8L9.5 6V2', 'M8 8.5V14'],
  regenerate: ['M13 8a5 5 0 1 1-1.46-3.54', 'M13 2.5v3h-3'],
  edit: ['M10.5 2.5l3 3L6 13H3v-3z', 'M9 4l3 3'],
  branch: [
    'M5 4.5v7',
    'M11 5.5c0 3.2-6 2.3-6 6',
    'M5 1.5a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z',
    'M11 2.5a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z',
    'M5 11.5a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z',
  ],
  delete: ['M2.5 4.5h11', 'M6 4.5V2.5h4v2', 'M4 4.5l.8 9h6.4l.8-9', 'M6.8 7v4', 'M9.2 7v4'],
};

export function ActionIcon({ name }: { name: ActionIconName }) {
  return (
    <svg
      aria-hidden="true"
      focusable="false"
      viewBox="0 0 16 16"
      width="16"
      height="16"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.5"
      strokeLinecap="round"
      strokeLinejoin="round"
    >
      {PATHS[name].map((path) => (
        <path key={path} d={path} />
      ))}
    </svg>
  );
}
