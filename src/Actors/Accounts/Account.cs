using System.Text;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Actors.Routing;
using Courier.Actors.Server;

namespace Courier.Actors.Accounts;

/// <summary>
/// One account: a subject space of its own (its own router shards), the users that log into it,
/// and what it shares with other accounts. A client's account is resolved once, at CONNECT; its
/// publishes and subscriptions then reach only this account's space.
/// </summary>
internal sealed class Account
{
    /// <summary>The global account: users outside any configured account (nats-server's <c>$G</c>).</summary>
    public const string GlobalName = "$G";

    private IReadOnlyList<IActorRef>? _routers;
    private Task<IReadOnlyList<IActorRef>>? _routersStarting;

    public Account(string name, int literalShards)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        Name = name;
        NameUtf8 = Encoding.UTF8.GetBytes(name);
        Space = new SubjectSpace(literalShards);
    }

    /// <summary>The name as written on route protocol lines (RS+/RS-/RMSG).</summary>
    public byte[] NameUtf8 { get; }

    /// <summary>The account's <c>accounts { }</c> entry; null for the global account and accounts made at run time.</summary>
    public AccountOptions? Options { get; internal set; }

    /// <summary>The streams this account imports; each of its clients' subscriptions that overlaps one gets a shadow in the exporter.</summary>
    public IReadOnlyList<StreamImport> StreamImports { get; internal set; } = [];

    /// <summary>The services this account imports.</summary>
    public IReadOnlyList<ServiceImport> ServiceImports { get; internal set; } = [];

    /// <summary>The requests in flight through this account's service exports; null when it exports none.</summary>
    public ServiceReplies? Replies { get; internal set; }

    /// <summary>The account's JetStream API actor; null when JetStream is not enabled for the account.</summary>
    public IActorRef? JetStream { get; internal set; }

    /// <summary>The account's open streams (for other accounts' mirrors and sources that import its JetStream API); null without JetStream.</summary>
    internal JetStream.LocalStreams? Streams { get; set; }

    /// <summary>
    /// The account whose JetStream API <paramref name="apiPrefix"/> reaches from here: a service import
    /// of the exporter's <c>$JS.API.&gt;</c> to <c>&lt;apiPrefix&gt;.&gt;</c> (nats-server's usual external setup).
    /// </summary>
    internal Account? JetStreamExporterFor(string apiPrefix)
    {
        foreach (var import in ServiceImports)
        {
            if (import.From == "$JS.API.>" && import.To.Length == apiPrefix.Length + 2 && import.To.StartsWith(apiPrefix, StringComparison.Ordinal) && import.To.EndsWith(".>", StringComparison.Ordinal))
            {
                return import.Exporter;
            }
        }

        return null;
    }

    /// <summary>
    /// The account's own in-process client: it holds the subscriptions of its service imports and of
    /// its <c>_R_.</c> replies (never started; publishers deliver to these subscriptions inline).
    /// </summary>
    internal InProcessConnection? ImportClient { get; set; }

    /// <summary>The account's name (its public key for JWT accounts).</summary>
    public string Name { get; }

    /// <summary>Whether this is the global account <c>$G</c>.</summary>
    public bool IsGlobal => Name == GlobalName;

    /// <summary>The account's subject space: only its own clients' (and routes' for it) subscriptions.</summary>
    public SubjectSpace Space { get; }

    /// <summary>The router shards of <see cref="Space"/>, by shard index; null until they exist.</summary>
    public IReadOnlyList<IActorRef>? Routers => Volatile.Read(ref _routers);

    /// <summary>Completes with the router shards once they exist (at once when they do).</summary>
    public Task<IReadOnlyList<IActorRef>> RoutersAsync() =>
        Routers is { } routers ? Task.FromResult(routers) : _routersStarting ?? throw new InvalidOperationException($"account {Name} has no routers yet");

    /// <summary>Starts the account's router shards under <paramref name="supervisor"/> (its <see cref="RouterSupervisor"/>).</summary>
    internal void StartRouters(IActorRef supervisor)
    {
        _routersStarting = AwaitShardsAsync(supervisor);
    }

    private async Task<IReadOnlyList<IActorRef>> AwaitShardsAsync(IActorRef supervisor)
    {
        // Every shard exists before any SUB of the account can be routed to it.
        var shards = await supervisor.Ask<RouterSupervisor.Protocol.ShardsReady>(RouterSupervisor.Protocol.AwaitShards.Instance).ConfigureAwait(false);
        IReadOnlyList<IActorRef> routers = [.. shards.Shards];
        Volatile.Write(ref _routers, routers);
        return routers;
    }

    public override string ToString() => Name;
}
