import Foundation
import Testing

@testable import Cancellable

/// Ties the Promela model of the cancellation protocol (`Verification/`) to the code: every transition of
/// `Verification/CancellationState.pml`, from every small state, is a row of `Verification/transitions.tsv`, which
/// spin prints from the model (`transitions.pml`; `Verification/check.sh` fails if the committed table is not what
/// the model prints). This test drives the real ``CancellationState`` through each row's event from the row's state
/// and expects the row's resulting state and action. Change a transition in the code without the model, or in the
/// model without the code, and one of the two fails.
@Suite struct ModelTransitionTests {
    /// One row of the table: the state before, the event, the state after and what the transition returned, in the
    /// model's codes (`transitions.pml` lists the columns).
    struct Row: CustomStringConvertible {
        let before: ModelState
        /// The state's `cancelsInputsOnResolution`, which no transition changes.
        let cancelsInputsOnResolution: Bool
        let event: Int
        let eventReason: Int
        let after: ModelState
        let result: ModelResult
        let line: Int

        var description: String {
            "line \(line): \(before)\(cancelsInputsOnResolution ? " (cancels inputs)" : "") "
                + "--\(Self.eventName(event, eventReason))--> \(after), \(result)"
        }

        static func eventName(_ event: Int, _ reason: Int) -> String {
            switch event {
            case 1: "cancel(reason: \(reasonName(reason)))"
            case 2: "resolve()"
            case 3: "addVote()"
            case 4: "castVote(reason: \(reasonName(reason)))"
            case 5: "withdrawVote()"
            case 6: "addHolder()"
            case 7: "releaseHolder()"
            case 8: "add(.action)"
            case 9: "add(.vote)"
            default: "event \(event)"
            }
        }
    }

    /// The fields of a state, as the model numbers them; `voteOpen` is the flag of the vote an event casts or
    /// withdraws.
    struct ModelState: Equatable, CustomStringConvertible {
        var phase: Int
        var openVotes: Int
        var holders: Int
        var reason: Int
        var callbacks: Int
        var voteOpen: Int

        var description: String {
            "(phase \(phase), openVotes \(openVotes), holders \(holders), reason \(reasonName(reason)), "
                + "callbacks \(callbacks), vote \(voteOpen == 1 ? "open" : "closed"))"
        }
    }

    /// What a transition returned: its action code, the `CancelAction` inside a `ReleaseAction.cancel` (else 0), the
    /// action's reason and the entries it moved out.
    struct ModelResult: Equatable, CustomStringConvertible {
        var action: Int
        var innerAction: Int
        var reason: Int
        var movedOut: Int

        var description: String {
            "action \(action) (\(innerAction)), reason \(reasonName(reason)), moved \(movedOut)"
        }
    }

    static let table: [Row] = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Verification/transitions.tsv")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").enumerated().compactMap { index, line in
            let fields = line.split(separator: "\t").compactMap { Int($0) }
            guard fields.count == 19 else { return nil }
            return Row(
                before: ModelState(
                    phase: fields[0],
                    openVotes: fields[1],
                    holders: fields[2],
                    reason: fields[3],
                    callbacks: fields[5],
                    voteOpen: fields[6]
                ),
                cancelsInputsOnResolution: fields[4] == 1,
                event: fields[7],
                eventReason: fields[8],
                after: ModelState(
                    phase: fields[9],
                    openVotes: fields[10],
                    holders: fields[11],
                    reason: fields[12],
                    callbacks: fields[13],
                    voteOpen: fields[14]
                ),
                result: ModelResult(
                    action: fields[15],
                    innerAction: fields[16],
                    reason: fields[17],
                    movedOut: fields[18]
                ),
                line: index + 1
            )
        }
    }()

    @Test func theTableCoversEveryTransitionAndEveryAction() {
        let table = Self.table
        #expect(table.count > 7_000, "Verification/transitions.tsv is missing or short: \(table.count) rows")
        #expect(Set(table.map(\.event)) == Set(1...9), "every event")
        // Every action each transition can return: CancelAction 1–6 and 16, ResolveAction 7–9, AddAction 10–12,
        // ReleaseAction 13–15 (addVote and addHolder return 0 or 1).
        let actions = Set(table.filter { ![3, 6].contains($0.event) }.map(\.result.action))
        #expect(actions == Set(1...16), "actions seen: \(actions.sorted())")
    }

    /// Each row runs twice: with the vote an event casts or withdraws as a ``Vote`` object, and as the vote kept
    /// in the state's own slot (``CancellationState/inlineVote``), which must make the same transitions.
    @Test(arguments: [false, true])
    func theCodeMakesEveryTransitionOfTheModel(voteInline: Bool) {
        var mismatches: [String] = []
        for row in Self.table {
            let (after, result) = Self.replay(row, voteInline: voteInline)
            if after != row.after || result != row.result {
                mismatches.append("\(row)\n    the code: \(after), \(result)")
            }
        }
        let shown = mismatches.prefix(10).joined(separator: "\n")
        let count = mismatches.count
        #expect(count == 0, "the code and the model disagree on \(count) transitions:\n\(shown)")
    }

    // MARK: Driving the real state machine

    /// The entries of the model's callback mask: e0 an action, e1 and e2 votes on another promise.
    final class Entries {
        let other = CancellablePromise<Int>.pending().promise
        let vote1: Vote
        let vote2: Vote

        init() {
            vote1 = Vote(on: other.handle.state, isOpen: false)
            vote2 = Vote(on: other.handle.state, isOpen: false)
        }

        func list(_ mask: Int) -> OnCancelList {
            var list = OnCancelList()
            if mask & 1 != 0 { list.append(.action { _ in }) }
            if mask & 2 != 0 { list.append(.vote(vote1)) }
            if mask & 4 != 0 { list.append(.vote(vote2)) }
            return list
        }

        func mask(_ list: OnCancelList) -> Int {
            var entries: [OnCancelEntry] = list.first.map { [$0] } ?? []
            entries += list.rest
            return entries.reduce(0) { mask, entry in
                switch entry {
                case .action: return mask | 1
                case .vote(let vote): return mask | (vote === vote1 ? 2 : vote === vote2 ? 4 : 1 << 8)
                case .cancelPromise: return mask | 1 << 9
                case .inlineVote: return mask | 1 << 10
                }
            }
        }
    }

    static func reasonCode(_ reason: CancellationReason?) -> Int {
        switch reason {
        case nil: 0
        case .user: 1
        case .timeout: 2
        case .lostRace: 3
        default: 99
        }
    }

    static func reason(_ code: Int) -> CancellationReason? {
        [nil, .user, .timeout, .lostRace][code]
    }

    static func replay(_ row: Row, voteInline: Bool) -> (ModelState, ModelResult) {
        let entries = Entries()
        var state = CancellationState(
            callbacks: entries.list(row.before.callbacks),
            cancelsInputsOnResolution: row.cancelsInputsOnResolution
        )
        state.phase = CancellationState.Phase(rawValue: UInt8(row.before.phase))!
        state.openVotes = UInt32(row.before.openVotes)
        state.holders = UInt32(row.before.holders)
        state.reason = reason(row.before.reason)
        var voteOpen = row.before.voteOpen == 1
        // The slot's vote is taken (open or closed) in every row that casts or withdraws it; free where a row
        // adds one.
        state.inlineVote = row.event == 3 ? .free : voteOpen ? .open : .closed
        let eventReason = reason(row.eventReason) ?? .user

        func cancelResult(_ action: CancellationState.CancelAction, reason: CancellationReason) -> ModelResult {
            switch action {
            case .cancel(let callbacks):
                ModelResult(action: 1, innerAction: 0, reason: reasonCode(reason), movedOut: entries.mask(callbacks))
            case .cancelInputsThenReject(let callbacks):
                ModelResult(action: 2, innerAction: 0, reason: reasonCode(reason), movedOut: entries.mask(callbacks))
            case .alreadyCancelled(let winning):
                ModelResult(action: 3, innerAction: 0, reason: reasonCode(winning), movedOut: 0)
            case .inputsBeingCancelled: ModelResult(action: 4, innerAction: 0, reason: 0, movedOut: 0)
            case .alreadyResolved: ModelResult(action: 5, innerAction: 0, reason: 0, movedOut: 0)
            case .otherVotesOpen: ModelResult(action: 6, innerAction: 0, reason: 0, movedOut: 0)
            case .voteClosed: ModelResult(action: 16, innerAction: 0, reason: 0, movedOut: 0)
            }
        }

        func releaseResult(_ action: CancellationState.ReleaseAction) -> ModelResult {
            switch action {
            case .none:
                return ModelResult(action: 13, innerAction: 0, reason: 0, movedOut: 0)
            case .cancel(let cancelAction, let reason):
                let inner = cancelResult(cancelAction, reason: reason)
                return ModelResult(
                    action: 14,
                    innerAction: inner.action,
                    reason: inner.reason,
                    movedOut: inner.movedOut
                )
            case .orphaned(let released):
                return ModelResult(action: 15, innerAction: 0, reason: 0, movedOut: entries.mask(released))
            }
        }

        let result: ModelResult
        switch row.event {
        case 1:
            result = cancelResult(state.cancel(reason: eventReason), reason: eventReason)
        case 2:
            switch state.resolve() {
            case .resolve(let released):
                result = ModelResult(action: 7, innerAction: 0, reason: 0, movedOut: entries.mask(released))
            case .cancelInputsThenResolve(let votes):
                result = ModelResult(action: 8, innerAction: 0, reason: 0, movedOut: entries.mask(votes))
            case .ignore:
                result = ModelResult(action: 9, innerAction: 0, reason: 0, movedOut: 0)
            }
        case 3:
            let added = voteInline ? state.addInlineVote() : state.addVote()
            result = ModelResult(action: added ? 1 : 0, innerAction: 0, reason: 0, movedOut: 0)
        case 4 where voteInline:
            result = cancelResult(state.castInlineVote(reason: eventReason), reason: eventReason)
            voteOpen = state.inlineVote == .open
        case 4:
            result = cancelResult(state.castVote(&voteOpen, reason: eventReason), reason: eventReason)
        case 5 where voteInline:
            result = releaseResult(state.withdrawInlineVote())
            voteOpen = state.inlineVote == .open
        case 5:
            result = releaseResult(state.withdrawVote(&voteOpen))
        case 6:
            result = ModelResult(action: state.addHolder() ? 1 : 0, innerAction: 0, reason: 0, movedOut: 0)
        case 7:
            result = releaseResult(state.releaseHolder())
        case 8, 9:
            let entry: OnCancelEntry = row.event == 8 ? .action { _ in } : .vote(entries.vote1)
            switch state.add(entry) {
            case .stored: result = ModelResult(action: 10, innerAction: 0, reason: 0, movedOut: 0)
            case .runNow(let reason):
                result = ModelResult(action: 11, innerAction: 0, reason: reasonCode(reason), movedOut: 0)
            case .discard: result = ModelResult(action: 12, innerAction: 0, reason: 0, movedOut: 0)
            }
        default:
            Issue.record("unknown event \(row.event) at line \(row.line)")
            result = ModelResult(action: -1, innerAction: 0, reason: 0, movedOut: 0)
        }
        let after = ModelState(
            phase: Int(state.phase.rawValue),
            openVotes: Int(state.openVotes),
            holders: Int(state.holders),
            reason: reasonCode(state.reason),
            callbacks: entries.mask(state.callbacks),
            voteOpen: voteOpen ? 1 : 0
        )
        return (after, result)
    }
}

/// A reason code of the model, as the code spells the reason.
private func reasonName(_ code: Int) -> String {
    ["nil", "user", "timeout", "lostRace"][code]
}
