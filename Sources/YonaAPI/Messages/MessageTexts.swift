import Foundation
import YonaDomain
import YonaStore

/// The texts a message shows that nobody typed: Yona's, in the reader's language (Yona fixed them in the sender's
/// language when sending; here they follow whoever reads).
package enum MessageTexts {
    /// `"<nickname> (me)"` on the user's own goal conflicts.
    package static func me(_ nickname: String, _ locale: YonaLocale) -> String {
        locale == .nlNL ? "\(nickname) (ik)" : "\(nickname) (me)"
    }

    /// The `message` of a message: what the sender wrote, or Yona's standard text where the kind has one.
    package static func text(of payload: MessagePayload, _ locale: YonaLocale) -> String? {
        let dutch = locale == .nlNL
        switch payload.kind {
        case .systemMessage:
            return payload.translations.map { $0[locale.rawValue] ?? $0[YonaLocale.fallback.rawValue] ?? "" } ?? payload.text
        case .buddyDisconnect:
            if let text = payload.text { return text }
            return payload.reason == "USER_ACCOUNT_DELETED"
                ? (dutch ? "Gebruikersaccount verwijderd" : "User account was deleted")
                : (dutch ? "De gebruiker heeft je 'ontvriend'" : "User removed you as a buddy")
        case .buddyConnectResponse where payload.reason == "USER_ACCOUNT_DELETED":
            // An invitee whose account went before answering (Yona's rejection on their behalf).
            return dutch ? "Gebruikersaccount verwijderd" : "User account was deleted"
        case .buddyInfoChange:
            return payload.text ?? (dutch ? "De gebruiker heeft zijn persoonlijke gegevens aangepast" : "User changed personal info")
        case .buddyVPNConnectionStatusChange:
            let device = payload.deviceName ?? ""
            if payload.vpnConnected == true {
                return dutch
                    ? "De gebruiker heeft de VPN verbonden op het apparaat met de naam '\(device)'" : "User connected VPN on device '\(device)'"
            }
            return dutch
                ? "De gebruiker heeft de VPN verbinding verbroken op het apparaat met de naam '\(device)'"
                : "User disconnected VPN on device '\(device)'"
        case .buddyDeviceChange:
            let old = payload.oldName ?? ""
            let new = payload.newName ?? ""
            switch payload.change {
            case "DEVICE_ADDED":
                return dutch ? "De gebruiker heeft een nieuw apparaat met de naam '\(new)' toegevoegd" : "User added a device named '\(new)'"
            case "DEVICE_RENAMED":
                return dutch
                    ? "De gebruiker heeft het apparaat met de naam '\(old)' hernoemd naar '\(new)'" : "User renamed device '\(old)' into '\(new)'"
            case "DEVICE_DELETED":
                return dutch ? "De gebruiker heeft het apparaat met de naam '\(old)' verwijderd" : "User deleted device '\(old)'"
            default:
                return payload.text
            }
        default:
            return payload.text
        }
    }
}
