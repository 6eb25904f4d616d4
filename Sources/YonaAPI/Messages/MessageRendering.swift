import Foundation
import YonaDomain

extension UserRendering {
    /// Renders a message for its recipient with the links Yona gives each kind: a goal conflict about the
    /// recipient is the "(me)" copy with the URL; a buddy's copy names the buddy by the nickname the recipient knows
    /// and hides the URL until disclosed; messages from a buddy link the buddy (`yona:buddy`) and the buddy's user
    /// (`yona:user`), or embed that user (requests and disconnects).
    package func message(_ message: OpenedMessage, of user: UnlockedUser, topLevel: Bool) -> MessageDTO {
        let payload = message.payload
        let href = links.message(user.id, message.id)
        let aboutMe = payload.subjectUserAnonymizedID == user.privateData.userAnonymizedID
        let buddy =
            user.privateData.buddies.first { $0.buddyUserAnonymizedID == payload.subjectUserAnonymizedID }
            ?? payload.sender.flatMap { sender in user.privateData.buddies.first { $0.userID == sender.userID } }
        // As Yona: a sender whose account is gone is neither linked nor embedded, only named.
        let senderAccountGone = payload.reason == "USER_ACCOUNT_DELETED"
        let senderUserID = senderAccountGone ? nil : payload.sender?.userID ?? buddy?.userID

        var halLinks = HALLinks(self: href, topLevel: topLevel)
        if payload.canBeDeleted { halLinks.add("edit", href) }
        var embeddedUser: MessageDTO.EmbeddedUser?
        func addBuddyLinks(user userLink: Bool) {
            if userLink, let senderUserID { halLinks.add("yona:user", links.user(senderUserID, requestingUserID: user.id, requestingDeviceID: nil)) }
            if let buddy { halLinks.add("yona:buddy", links.buddy(user.id, buddy.id)) }
        }
        switch payload.kind {
        case .goalConflict:
            if let category = payload.activityCategoryID { halLinks.add("yona:activityCategory", links.activityCategory(category)) }
            if !aboutMe {
                addBuddyLinks(user: false)
                if payload.status == "ANNOUNCED" { halLinks.add("yona:requestDisclosure", "\(href)/requestDisclosure") }
            }
            if let day = dayDetails(owner: payload.subjectUserAnonymizedID, payload, of: user) { halLinks.add("yona:dayDetails", day) }
        case .goalChange:
            if let category = payload.activityCategoryID { halLinks.add("related", links.activityCategory(category)) }
            addBuddyLinks(user: true)
        case .disclosureRequest:
            if let original = payload.originalMessageID { halLinks.add("related", links.message(user.id, original)) }
            addBuddyLinks(user: true)
            if payload.status == "DISCLOSURE_REQUESTED" {
                halLinks.add("yona:accept", "\(href)/accept")
                halLinks.add("yona:reject", "\(href)/reject")
            }
            // The request is about the reader's own day.
            if let day = dayDetails(owner: user.privateData.userAnonymizedID, payload, of: user) { halLinks.add("yona:dayDetails", day) }
        case .disclosureResponse:
            if let copy = payload.buddyCopyMessageID { halLinks.add("related", links.message(user.id, copy)) }
            addBuddyLinks(user: true)
            // The answer is about the buddy's day, which only an acceptance opens (as Yona).
            if payload.status == "DISCLOSURE_ACCEPTED", let day = dayDetails(owner: payload.subjectUserAnonymizedID, payload, of: user) {
                halLinks.add("yona:dayDetails", day)
            }
        case .buddyConnectRequest, .buddyDisconnect:
            if payload.kind == .buddyConnectRequest, payload.status == "REQUESTED" {
                halLinks.add("yona:accept", "\(href)/accept")
                halLinks.add("yona:reject", "\(href)/reject")
            }
            if let sender = payload.sender, !senderAccountGone {
                // As Yona: the user can be followed only once the request is accepted (never from a disconnect).
                let followable = payload.kind == .buddyConnectRequest && payload.status == "ACCEPTED"
                embeddedUser = .init(
                    firstName: sender.firstName, lastName: sender.lastName, mobileNumber: sender.mobileNumber,
                    nickname: sender.nickname,
                    _links: followable
                        ? HALLinks(
                            self: links.user(sender.userID, requestingUserID: user.id, requestingDeviceID: nil),
                            topLevel: false) : nil)
            }
        case .buddyConnectResponse, .buddyDeviceChange, .buddyInfoChange, .buddyVPNConnectionStatusChange:
            addBuddyLinks(user: true)
        case .systemMessage:
            break
        case .activityComment:
            // The sender's user; the thread in this inbox; the day or week as this reader reaches it (their own
            // details, or their buddy's); and, from a buddy, the buddy and the way to answer.
            if aboutMe {
                halLinks.add("yona:user", links.user(user.id, requestingUserID: user.id, requestingDeviceID: nil))
            } else {
                addBuddyLinks(user: true)
                halLinks.add("yona:reply", "\(href)/reply")
            }
            halLinks.add("yona:threadHead", links.message(user.id, payload.threadHeadMessageID ?? message.id))
            if let replied = payload.repliedMessageID { halLinks.add("yona:repliedMessage", links.message(user.id, replied)) }
            if let details = commentDetails(payload, of: user) { halLinks.add(details.rel, details.href) }
        }
        // The sender's photo as Yona shows it: the user's own, a buddy's as last announced, else the one the message
        // was sent with (a request before the relation, a buddy since gone).
        let photo: UUID? =
            payload.kind == .systemMessage
            ? nil : aboutMe ? user.privateData.photoID : buddy.map { $0.photoID } ?? payload.sender?.photoID
        if let photo { halLinks.add("yona:userPhoto", links.userPhoto(photo)) }
        halLinks.add(
            message.record.isRead ? "yona:markUnread" : "yona:markRead",
            "\(href)/\(message.record.isRead ? "markUnread" : "markRead")")

        let nickname: String
        if payload.kind == .systemMessage {
            nickname = "Yona"
        } else if aboutMe {
            nickname =
                payload.kind == .goalConflict || payload.kind == .activityComment
                ? MessageTexts.me(user.privateData.nickname, locale) : user.privateData.nickname
        } else {
            nickname = buddy?.nickname ?? payload.sender?.nickname ?? "Yona"
        }
        // A disclosure response keeps the activity's times only for its `yona:dayDetails`: Yona shows none.
        let showsTimes = payload.kind != .disclosureResponse
        return MessageDTO(
            type: payload.kind.rawValue, messageId: message.id, nickname: nickname,
            creationTime: YonaDateFormat.timestamp(message.record.creationTime), isRead: message.record.isRead,
            url: payload.url, urlIsExplicitNull: payload.kind == .goalConflict && !aboutMe,
            activityStartTime: showsTimes ? payload.activityStartTime.map(YonaDateFormat.timestamp) : nil,
            activityEndTime: showsTimes ? payload.activityEndTime.map(YonaDateFormat.timestamp) : nil,
            status: payload.status,
            message: MessageTexts.text(of: payload, locale), reason: payload.kind == .buddyDisconnect ? payload.reason : nil,
            change: payload.change, oldName: payload.oldName,
            newName: payload.newName, threadHeadMessageId: payload.kind == .activityComment ? payload.threadHeadMessageID : nil,
            _embedded: embeddedUser.map { .init(user: $0) }, _links: halLinks)
    }

    /// Where the reports of `owner` are for this reader: their own, or their buddy's (nil for anyone else).
    private func activityBase(of owner: UUID, for user: UnlockedUser) -> String? {
        if owner == user.privateData.userAnonymizedID { return "\(links.user(user.id))/activity" }
        guard let buddy = user.privateData.buddies.first(where: { $0.buddyUserAnonymizedID == owner }) else { return nil }
        return "\(links.buddy(user.id, buddy.id))/activity"
    }

    /// Yona's `yona:dayDetails` on a goal conflict and the disclosure messages about it: the day (in the users' time
    /// zone) the activity began, under the conflict's goal, as this reader reaches it. Nil for messages stored
    /// before they carried the goal and the time.
    private func dayDetails(owner: UUID, _ payload: MessagePayload, of user: UnlockedUser) -> String? {
        guard let goal = payload.goalID, let start = payload.activityStartTime, let base = activityBase(of: owner, for: user) else { return nil }
        return "\(base)/days/\(UserCalendar.day(start))/details/\(goal.lowercasedString)"
    }

    /// Where a comment's day or week is for this reader: their own details, or their buddy's.
    private func commentDetails(_ payload: MessagePayload, of user: UnlockedUser) -> (rel: String, href: String)? {
        guard let interval = payload.interval, let owner = payload.activityOwnerAnonymizedID, let version = payload.goalID,
            let base = activityBase(of: owner, for: user)
        else { return nil }
        let isWeek = interval.hasPrefix("week:")
        let date = interval.split(separator: ":", maxSplits: 1).last.map(String.init) ?? ""
        return (
            isWeek ? "yona:weekDetails" : "yona:dayDetails",
            "\(base)/\(isWeek ? "weeks" : "days")/\(date)/details/\(version.lowercasedString)"
        )
    }

    /// A buddy as its owner sees it: the statuses, and the buddy's user as `yona:user` (see `buddyUser`).
    package func buddy(_ buddy: PrivateBuddy, of user: UnlockedUser, side: BuddySide?, topLevel: Bool) -> BuddyDTO {
        let href = links.buddy(user.id, buddy.id)
        var halLinks = HALLinks(self: href, topLevel: topLevel)
        halLinks.add("edit", href)
        if buddy.sendingStatus == .accepted {
            halLinks.add("yona:dailyActivityReports", "\(href)/activity/days/")
            halLinks.add("yona:weeklyActivityReports", "\(href)/activity/weeks/")
        }
        return BuddyDTO(
            sendingStatus: buddy.sendingStatus.rawValue, receivingStatus: buddy.receivingStatus.rawValue,
            lastStatusChangeTime: YonaDateFormat.timestamp(buddy.lastStatusChangeTime),
            lastMonitoredActivityDate: buddy.sendingStatus == .accepted ? side?.lastMonitoredActivityDate : nil,
            _embedded: .init(user: buddyUser(buddy, side: side, requester: user, topLevel: false)),
            _links: halLinks)
    }

    package func messagePage(_ page: MessageService.Page, of user: UnlockedUser, onlyUnread: Bool, sort: String? = nil) -> MessagePageDTO {
        func pageHref(_ number: Int) -> String {
            "\(links.messages(user.id))?page=\(number)&size=\(page.size)" + (sort.map { "&sort=\($0)" } ?? "")
                + (onlyUnread ? "&onlyUnreadMessages=true" : "")
        }
        let halLinks = HALLinks.paged(page.number, of: page.totalPages, href: pageHref)
        let items = page.messages.map { message($0, of: user, topLevel: false) }
        return MessagePageDTO(
            _embedded: items.isEmpty ? nil : ["yona:messages": items],
            page: .init(size: page.size, totalElements: page.totalElements, totalPages: page.totalPages, number: page.number),
            _links: halLinks)
    }
}
