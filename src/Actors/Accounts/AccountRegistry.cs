using System.Collections.Concurrent;
using Akka.Actor;
using Courier.Actors.Routing;
using Courier.Actors.Server;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Accounts;

/// <summary>
/// The node's accounts by name, the global account <c>$G</c> among them. An account made before the
/// actor system starts gets its router shards at <see cref="Start"/>; one made later (a JWT account
/// met at CONNECT) gets them at once. Thread-safe.
/// </summary>
internal sealed class AccountRegistry
{
    private readonly ConcurrentDictionary<string, Account> _accounts = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<byte[], Account> _byUtf8 = new(SubjectBytesComparer.Instance);
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

    /// <summary>
    /// Creates the configured accounts and links their imports to the exporters (the config binder
    /// has checked that every import is allowed).
    /// </summary>
    public void Configure(IReadOnlyList<AccountOptions> accounts)
    {
        foreach (var options in accounts)
        {
            GetOrCreate(options.Name).Options = options;
        }

        foreach (var options in accounts)
        {
            var account = GetOrCreate(options.Name);
            var streams = new List<StreamImport>();
            var services = new List<ServiceImport>();
            foreach (var import in options.Imports)
            {
                if (Find(import.Account) is not { Options: { } exporterOptions } exporter ||
                    AccountExports.FindExport(exporterOptions, account.Name, import.Subject, import.IsService) is not { } export)
                {
                    continue;
                }

                if (import.IsService)
                {
                    exporter.Replies ??= new ServiceReplies();
                    services.Add(new ServiceImport(exporter, import.Subject, import.To ?? import.Subject, export.ResponseType));
                }
                else
                {
                    streams.Add(new StreamImport(exporter, import.Subject, import.To, import.Prefix));
                }
            }

            account.StreamImports = streams;
            account.ServiceImports = services;
        }
    }

    /// <summary>The account named <paramref name="name"/>, or null.</summary>
    public Account? Find(string name) => _accounts.GetValueOrDefault(name);

    /// <summary>The account named by the UTF-8 <paramref name="name"/> of a route protocol line, or null. No allocation.</summary>
    public Account? Find(ReadOnlySpan<byte> name) =>
        _byUtf8.GetAlternateLookup<ReadOnlySpan<byte>>().TryGetValue(name, out var account) ? account : null;

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

            _byUtf8[account.NameUtf8] = account;
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
