import type { BuildInfo } from './build-info.ts';

/** Deployment facts only the operator knows (flags or SVC_* variables); unset ones are null. */
export interface ReleaseSettings {
  downloadUrl?: string | undefined;
  updaterManifestUrl?: string | undefined;
  notes?: string | undefined;
}

/**
 * `GET /api/version`: the compatibility fields existing updaters read, and the structured ones.
 * The web pages (/settings/api-keys, /docs/hosted) are served by this same build, so their
 * version is svc's; there is no Electron build, so its fields are null rather than invented.
 */
export function releaseRecord(build: BuildInfo, settings: ReleaseSettings, enterprise: boolean): Record<string, unknown> {
  return {
    version: build.version,
    build: build.commit === null ? null : `${build.version}+${build.commit.slice(0, 12)}`,
    commit: build.commit,
    deployment: enterprise ? 'enterprise' : 'hosted',
    download_url: settings.downloadUrl ?? null,
    updater_manifest_url: settings.updaterManifestUrl ?? null,
    notes: settings.notes ?? null,
    release: { svc: build.version, web: build.version, electron: null },
    web: { version: build.version },
    electron: { version: null, released_at: null },
  };
}
