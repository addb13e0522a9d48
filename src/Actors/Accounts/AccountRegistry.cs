using System.Collections.Concurrent;
using Akka.Actor;
using Courier.Actors.Routing;
using Courier.Actors.Server;

namespace Courier.Actors.Accounts;

/// <summary>
/// The node's accounts by name, the global account <c>$G</c> among them. An account made before the
/// actor system starts gets its router shards at <see cref="Start"/>; one made later (a JWT account
/// met at CONNECT) gets them at once. Thread-safe.
/// </summary>
internal sealed class AccountRegistry
{
    private readonly ConcurrentDictionary<string, Account> _accounts = new(StringComparer.Ordinal);
    private readonly Lock _startLock = new();
    private readonly int _literalShards;
    private readonly ClientRegistry _clients;
    private ActorSystem? _system;
    private int _supervisors;

    public AccountRegistry(int literalShards, ClientRegistry clients)
    {
        _literalShards = literalShards;
        _clients = clients;
        Global = GetOrCreate(Account.GlobalName);
    }

    /// <summary>The global account <c>$G</c>.</summary>
    public Account Global { get; }

    /// <summary>Every account, the global one included.</summary>
    public ICollection<Account> All => _accounts.Values;

    /// <summary>The account named <paramref name="name"/>, or null.</summary>
    public Account? Find(string name) => _accounts.GetValueOrDefault(name);

    /// <summary>The account named <paramref name="name"/>, created (with its router shards, once started) if it is new.</summary>
    public Account GetOrCreate(string name)
    {
        if (_accounts.TryGetValue(name, out var existing))
        {
            return existing;
        }

        lock (_startLock)
        {
            if (_accounts.TryGetValue(name, out existing))
            {
                return existing;
            }

            var account = new Account(name, _literalShards);
            if (_system is { } system)
            {
                StartRouters(system, account);
            }

            _accounts[name] = account;
            return account;
        }
    }

    /// <summary>Starts the router shards of every account so far; later accounts start theirs when made. Completes when all exist.</summary>
    public Task Start(ActorSystem system)
    {
        var starting = new List<Task>();
        lock (_startLock)
        {
            _system = system;
            foreach (var account in _accounts.Values)
            {
                StartRouters(system, account);
                starting.Add(account.RoutersAsync());
            }
        }

        return Task.WhenAll(starting);
    }

    /// <summary>The router supervisors made so far (stopped with the broker when it does not own the actor system).</summary>
    public IEnumerable<IActorRef> Supervisors => _supervisorRefs;

    private readonly ConcurrentQueue<IActorRef> _supervisorRefs = new();

    private void StartRouters(ActorSystem system, Account account)
    {
        // Actor names must not depend on account names (any UTF-8): the global account keeps "routers".
        var name = account.IsGlobal ? "routers" : $"routers-{++_supervisors}";
        var supervisor = system.ActorOf(RouterSupervisor.Props(account, _clients), name);
        _supervisorRefs.Enqueue(supervisor);
        account.StartRouters(supervisor);
    }
}
