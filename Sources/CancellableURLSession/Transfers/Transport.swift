import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a transfer of an app's session runs, and who receives its callbacks as they come: one answer for every
/// transfer the library makes.
///
/// - A session made by `URLSession.withProgressReporting(configuration:delegateQueue:)`: that session, and its
///   router.
/// - A session without a delegate (`URLSession.shared`, `URLSession(configuration:)`): on Apple platforms from
///   macOS 12 and iOS 15, that session, with a router set as each task's own delegate. Elsewhere — Linux, whose
///   FoundationNetworking never calls a task's own delegate, and Apple platforms before those versions — a stand-in
///   session with the same configuration (its cookies, credentials, headers, protocols and timeouts; no URL cache on
///   Linux, see `withProgressReporting`), made once per session and let go of when that session is released
///   (``StandInSessions``). So every kind of transfer streams on these sessions too: live progress, downloads
///   written to their partial file as bytes arrive, and nothing written elsewhere — a download task on
///   swift-corelibs-foundation leaves what it received in the temporary directory when it is cancelled.
/// - A download that makes requests after it has started — a segmented one, one that retries — runs on the stand-in
///   of any of those sessions, on every platform (``URLSession/lastingTransport``): the app may invalidate its
///   session right after starting it.
/// - A session with a delegate of the app's own: that session, without a router. Its transfers use completion
///   handlers, so that the app's delegate keeps answering its challenges (certificate pinning, say): a download's
///   body arrives at the end, in a file the platform chooses.
struct Transport: Sendable {
    /// Where the tasks are made.
    let session: URLSession
    /// Who hands each task's callbacks to its `TransferDelegate`; `nil`: the tasks use completion handlers.
    let router: TransferRouter?
    /// The app's session, when `session` is its stand-in: held as long as a download holds this transport, so that
    /// the stand-in is not let go of (``StandInSessions``) while the download still makes requests on it — a
    /// segmented download's next segment, a retry.
    let owner: URLSession?

    init(session: URLSession, router: TransferRouter?, owner: URLSession? = nil) {
        self.session = session
        self.router = router
        self.owner = owner
    }

    /// Whether bytes are delivered as they arrive.
    var isLive: Bool { router != nil }
}

extension URLSession {
    /// Where this session's cancellable transfers run (``Transport``).
    var transport: Transport {
        if let router = delegate as? TransferRouter { return Transport(session: self, router: router) }
        // A background session's transfers run outside the app, and it has a delegate anyway.
        guard delegate == nil, configuration.identifier == nil else { return Transport(session: self, router: nil) }
        #if !canImport(FoundationNetworking)
        if #available(macOS 12, iOS 15, tvOS 15, watchOS 8, *) {
            return Transport(session: self, router: TransferRouter(perTask: true))
        }
        #endif
        return standInTransport
    }

    /// Where a download that makes requests after it has started — a segmented download's next segments, a retry —
    /// runs: on a session without a delegate of the app's own (one made by `withProgressReporting`,
    /// `URLSession.shared`, `URLSession(configuration:)`), a stand-in session of the library's (``StandInSessions``),
    /// on every platform.
    /// An app may invalidate its session as soon as it has started a download (`finishTasksAndInvalidate()`), and a
    /// task made on an invalidated session ends the process (swift-corelibs-foundation: "Session invalidated"; Apple's
    /// Foundation raises an exception): the stand-in is never invalidated while a download holds it.
    ///
    /// A session with a delegate of the app's own keeps its transfers (its delegate answers their challenges): such a
    /// session must stay valid while a download that retries runs on it.
    var lastingTransport: Transport {
        guard configuration.identifier == nil, delegate == nil || delegate is TransferRouter else { return transport }
        return standInTransport
    }

    private var standInTransport: Transport {
        let standIn = StandInSessions.session(for: self)
        return Transport(session: standIn, router: standIn.delegate as? TransferRouter, owner: self)
    }
}
