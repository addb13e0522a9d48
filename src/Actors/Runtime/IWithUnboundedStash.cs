namespace Courier.Actors.Runtime;

/// <summary>
/// An actor with a stash (Akka.NET <c>IWithUnboundedStash</c>). The runtime sets <see cref="Stash"/> right after
/// the constructor returns. Before a restart the stashed messages go back to the front of the mailbox, for the
/// new instance; when the actor stops they go to dead letters.
/// </summary>
public interface IWithUnboundedStash
{
    /// <summary>This instance's stash; set by the runtime.</summary>
    IStash Stash { get; set; }
}
