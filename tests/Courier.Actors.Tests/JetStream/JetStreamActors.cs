using Akka.Actor;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// The actors of a stream and of a consumer, found as the children they are (an account's JetStream
/// API actor starts <c>stream-&lt;name&gt;-&lt;incarnation&gt;</c>, a stream actor
/// <c>consumer-&lt;name&gt;-&lt;incarnation&gt;</c>), for fault injection: Kill, Watch.
/// </summary>
internal static class JetStreamActors
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(5);

    /// <summary>The running actor of stream <paramref name="name"/>, or <see cref="ActorRefs.Nobody"/>.</summary>
    public static Task<IActorRef> StreamAsync(IActorRef jetStream, string name) => ChildAsync(jetStream, "stream", name);

    /// <summary>The running actor of consumer <paramref name="name"/> of <paramref name="stream"/>, or <see cref="ActorRefs.Nobody"/>.</summary>
    public static Task<IActorRef> ConsumerAsync(IActorRef stream, string name) => ChildAsync(stream, "consumer", name);

    private static async Task<IActorRef> ChildAsync(IActorRef parent, string kind, string name)
    {
        // Any incarnation; the name escaped as the parents escape it (a name with '-' could also match a longer one: not in these tests).
        var selection = new ActorSelection(parent, $"{kind}-{Uri.EscapeDataString(name)}-*");
        var identity = await selection.Ask<ActorIdentity>(new Identify(null), Timeout).ConfigureAwait(false);
        return identity.Subject ?? ActorRefs.Nobody;
    }
}
