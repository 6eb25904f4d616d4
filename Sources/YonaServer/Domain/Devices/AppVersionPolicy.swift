import Foundation

/// Yona's oldest supported app per operating system (`YONA_MIN_APP_VERSION_ANDROID`, `YONA_MIN_APP_VERSION_IOS`):
/// a version code the app must reach and the version name the refusal shows. An app that says it is older gets
/// `error.device.app.version.not.supported` wherever it reports its version (registration, app opened).
struct AppVersionPolicy: Sendable, Equatable {
    struct Minimum: Sendable, Equatable {
        let code: Int
        let name: String
    }

    var android: Minimum?
    var ios: Minimum?

    /// `CODE` or `CODE/NAME` (`218/1.2`); nil for anything else.
    static func parse(_ raw: String) -> Minimum? {
        let parts = raw.split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let code = Int(first), code >= 0 else { return nil }
        let name = parts.count > 1 ? parts[1] : first
        guard !name.isEmpty, name.count <= 32 else { return nil }
        return Minimum(code: code, name: name)
    }

    func check(_ operatingSystem: OperatingSystem, version: String?, code: Int?) throws(YonaError) {
        let minimum: Minimum? =
            switch operatingSystem {
            case .android: android
            case .ios: ios
            case .unknown: nil // as Yona: no check until the app says which system it runs on
            }
        guard let minimum, let code, code < minimum.code else { return }
        throw YonaError(.appVersionNotSupported, quoting: [operatingSystem.rawValue, minimum.name, version ?? String(code)])
    }
}
