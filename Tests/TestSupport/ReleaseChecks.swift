package import Testing

/// The leak tests' weak-capture check: `make` builds a link whose body holds a fresh `Tracked` (and nothing else
/// does); while the link is pending it must keep its body, and once `settle` has run — the input resolved, the link
/// waited for — it must have let go of it, although the link itself is still held.
package func expectReleasedOnceSettled<Link>(
    _ what: String,
    make: (Tracked) -> Link,
    settle: (Link) -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    weak var weakCapture: Tracked?
    let link: Link
    do {
        let capture = Tracked()
        weakCapture = capture
        link = make(capture)
    }
    #expect(weakCapture != nil, "\(what): a pending link keeps its body", sourceLocation: sourceLocation)
    settle(link)
    #expect(weakCapture == nil, "\(what): body still held once settled", sourceLocation: sourceLocation)
    withExtendedLifetime(link) {}
}
