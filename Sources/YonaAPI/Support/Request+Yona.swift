import Foundation
import Vapor
import YonaDomain

extension Request {
    /// A UUID path parameter; a malformed one is `error.invalid.uuid`.
    package func uuidParameter(_ name: String) throws -> UUID {
        guard let raw = parameters.get(name), let id = UUID(uuidString: raw) else { throw YonaError(.invalidUUID) }
        return id
    }

    /// A UUID query parameter that must be present.
    package func requiredUUIDQuery(_ name: String) throws -> UUID {
        guard let id = try optionalUUIDQuery(name) else { throw YonaError(.missingRequestParameter, quoting: name) }
        return id
    }

    package func optionalUUIDQuery(_ name: String) throws -> UUID? {
        guard let raw = query[String.self, at: name] else { return nil }
        guard let id = UUID(uuidString: raw) else { throw YonaError(.invalidUUID) }
        return id
    }

    /// A paging query parameter (`page`, `size`): absent is the default, anything but a number in `range` is refused.
    package func pagingParameter(_ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let raw = query[String.self, at: name] else { return value }
        guard let number = Int(raw), range.contains(number) else { throw YonaError(.invalidParameter) }
        return number
    }

    /// The configured oldest app versions (`AppVersionPolicy`), for an app that reports its version.
    package func checkAppVersion(_ operatingSystem: OperatingSystem, version: String?, code: Int?) throws {
        try application.yona.config.minimumAppVersions.check(operatingSystem, version: version, code: code)
    }

    package func checkAppVersion(_ device: NewDevice) throws {
        try checkAppVersion(device.operatingSystem, version: device.appVersion, code: device.appVersionCode)
    }

    package var yonaPasswordHeader: String? { headers.first(name: "Yona-Password") }

    /// The user named by the `userID` path parameter, unlocked with this request's `Yona-Password`.
    package func unlockPathUser() async throws -> UnlockedUser {
        try await users.unlock(userID: try uuidParameter("userID"), passwordHeader: yonaPasswordHeader)
    }
}
