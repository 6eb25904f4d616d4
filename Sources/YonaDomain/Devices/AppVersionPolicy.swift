import Foundation

/// Yona's oldest supported app per operating system (`YONA_MIN_APP_VERSION_ANDROID`, `YONA_MIN_APP_VERSION_IOS`):
/// a version code the app must reach and the version name the refusal shows. An app that says it is older gets
/// `error.device.app.version.not.supported` wherever it reports its version (registration, app opened).
package struct AppVersionPolicy: Sendable, Equatable {
    package struct Minimum: Sendable, Equatable {
        package let code: Int
        package let name: String

        package init(code: Int, name: String) {
            self.code = code
            self.name = name
        }
    }

    package var android: Minimum?
    package var ios: Minimum?

    package init(android: Minimum? = nil, ios: Minimum? = nil) {
        self.android = android
        self.ios = ios
    }

    /// `CODE` or `CODE/NAME` (`218/1.2`); nil for anything else.
    package static func parse(_ raw: String) -> Minimum? {
        let parts = raw.split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let code = Int(first), code >= 0 else { return nil }
        let name = parts.count > 1 ? parts[1] : first
        guard !name.isEmpty, name.count <= 32 else { return nil }
        return Minimum(code: code, name: name)
    }

    package func check(_ operatingSystem: OperatingSystem, version: String?, code: Int?) throws(YonaError) {
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
