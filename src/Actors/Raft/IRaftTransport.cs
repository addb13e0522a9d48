namespace Courier.Actors.Raft;

/// <summary>
/// Carries Raft frames (<see cref="Courier.Raft.RaftCodec"/>) between this node's <see cref="RaftHost"/>
/// and a peer's. In the server: a publish on the peer's internal subject over the route link
/// (nats-server's way); in tests: a call into the other host.
/// </summary>
internal interface IRaftTransport
{
    /// <summary>Sends one frame to <paramref name="peer"/>. Never blocks; a frame that cannot go is dropped (Raft resends).</summary>
    void Send(ulong peer, ReadOnlyMemory<byte> frame);
}
