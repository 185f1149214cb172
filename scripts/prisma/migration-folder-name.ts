/** Prisma's folder name: UTC `YYYYMMDDHHMMSS_<name>`. */
export function migrationFolderName(name: string, now = new Date()): string {
  const timestamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${timestamp}_${slugifyMigrationName(name)}`;
}

/** Lower-case words joined by `_`, as `prisma migrate dev --name` does; at most 200 characters. */
export function slugifyMigrationName(name: string): string {
  const slug = name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 200);
  if (!slug) throw new Error(`"${name}" is not a usable migration name: use letters and digits, e.g. add_thread_tags`);
  return slug;
}
