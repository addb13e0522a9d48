namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// Everything the runtime keeps for one actor across its incarnations (Akka's <c>ActorCell</c>): the current
/// instance and behaviour stack, the mailbox, children, watches, timers and supervision state. All of it is
/// touched only on the actor's own turn (see <see cref="Mailbox"/>), except the children table, which a
/// parent's <c>ActorOf</c> and the system's top-level <c>ActorOf</c> reach from other threads under a lock.
/// </summary>
internal sealed partial class ActorCell : IActorContext
{
    [ThreadStatic]
    private static ActorCell? _current;

    private readonly ActorSystem _system;
    private readonly Props _props;
    private readonly ActorCell? _parent;
    private readonly LocalActorRef _self;
    private readonly List<Receive> _behaviorStack = [];

    private ActorBase? _actor;
    private Receive? _defaultBehavior;
    private SupervisorStrategy? _strategy;
    private TimerScheduler? _timers;
    private Envelope _currentEnvelope;
    private bool _awaitingConstruction;
    private ActorBase? _constructedActor;

    public ActorCell(ActorSystem system, Props props, ActorCell? parent, string name, string path)
    {
        _system = system;
        _props = props;
        _parent = parent;
        Name = name;
        _self = new LocalActorRef(this, path);
        Mailbox = new Mailbox(this);
    }

    /// <summary>The cell whose turn runs on this thread, if any.</summary>
    public static ActorCell? Current
    {
        get => _current;
        set => _current = value;
    }

    public string Name { get; }

    public Mailbox Mailbox { get; }

    public LocalActorRef Self => _self;

    IActorRef IActorContext.Self => _self;

    public IActorRef Sender => _currentEnvelope.Sender ?? _system.DeadLetters;

    /// <summary>The message being processed and its sender (what <c>Stash()</c> stashes).</summary>
    public Envelope CurrentEnvelope => _currentEnvelope;

    /// <summary>This instance's timers, created on first use when the actor is not <see cref="IWithTimers"/>
    /// (runtime modules use them with private keys); cancelled on restart and stop like any timer.</summary>
    public TimerScheduler Timers => _timers ??= new TimerScheduler(this);

    public IActorRef Parent => _parent?.Self ?? ActorRefs.Nobody;

    public ActorSystem System => _system;

    public Props Props => _props;

    /// <summary>
    /// Binds <paramref name="actor"/>, under construction, to this cell: true exactly once per factory call,
    /// so an actor constructed anywhere else (or a second one in the same factory) is rejected.
    /// </summary>
    public bool TryBindConstructedActor(ActorBase actor)
    {
        if (!_awaitingConstruction)
        {
            return false;
        }

        _awaitingConstruction = false;
        _constructedActor = actor;
        return true;
    }

    public void Become(Receive receive)
    {
        ArgumentNullException.ThrowIfNull(receive);
        if (_behaviorStack.Count == 0)
        {
            _behaviorStack.Add(receive);
        }
        else
        {
            _behaviorStack[^1] = receive;
        }
    }

    public void BecomeStacked(Receive receive)
    {
        ArgumentNullException.ThrowIfNull(receive);
        _behaviorStack.Add(receive);
    }

    public void UnbecomeStacked()
    {
        if (_behaviorStack.Count > 1)
        {
            _behaviorStack.RemoveAt(_behaviorStack.Count - 1);
        }
        else if (_defaultBehavior is not null)
        {
            _behaviorStack.Clear();
            _behaviorStack.Add(_defaultBehavior);
        }
    }

    /// <summary>Counts user messages processed (a stash tells "the same message twice" from a redelivery by it).</summary>
    public long InvocationCount { get; private set; }

    /// <summary>Processes one user message (called by the mailbox on the actor's turn).</summary>
    public void Invoke(Envelope envelope)
    {
        InvocationCount++;
        _currentEnvelope = envelope;
        try
        {
            switch (envelope.Message)
            {
                case TimerMsg timerMsg:
                    if (_timers is not null && _timers.TryIntercept(timerMsg, out var scheduled))
                    {
                        _currentEnvelope = new Envelope(scheduled, envelope.Sender);
                        ReceiveMessage(scheduled);
                    }

                    break;
                case PoisonPill:
                    Stop(_self);
                    break;
                case Kill:
                    throw new ActorKilledException("Kill");
                case Terminated terminated:
                    ReceivedTerminated(terminated);
                    break;
                default:
                    ReceiveMessage(envelope.Message);
                    break;
            }
        }
        catch (Exception e)
        {
            HandleInvokeFailure(e, perpetratorChild: null);
        }
        finally
        {
            _currentEnvelope = default;
        }
    }

    /// <summary>Processes every queued system message (called by the mailbox on the actor's turn).</summary>
    public void ProcessSystemMessages()
    {
        while (!Mailbox.IsClosed && Mailbox.TryDequeueSystem(out var message))
        {
            try
            {
                SystemInvoke(message);
            }
            catch (Exception e)
            {
                HandleInvokeFailure(e, perpetratorChild: null);
            }
        }
    }

    /// <summary>
    /// A system message that reached this actor after it stopped (any thread): a watch is answered with
    /// <see cref="Terminated"/>, the rest is dropped.
    /// </summary>
    public void HandleSystemMessageAfterStop(SystemMessage message)
    {
        if (message is Watch watch && ReferenceEquals(watch.Watchee, _self) && !ReferenceEquals(watch.Watcher, _self))
        {
            watch.Watcher.SendSystemMessage(new DeathWatchNotification(_self, existenceConfirmed: false));
        }
    }

    public override string ToString() => $"ActorCell({_self.Path})";

    private void SystemInvoke(SystemMessage message)
    {
        switch (message)
        {
            case Create:
                HandleCreate();
                break;
            case Recreate recreate:
                FaultRecreate(recreate.Cause);
                break;
            case Suspend:
                FaultSuspend();
                break;
            case Resume resume:
                FaultResume(resume.CausedByFailure);
                break;
            case Terminate:
                HandleTerminate();
                break;
            case Watch watch:
                AddWatcher(watch.Watchee, watch.Watcher);
                break;
            case Unwatch unwatch:
                RemoveWatcher(unwatch.Watchee, unwatch.Watcher);
                break;
            case Failed failed:
                HandleFailedChild(failed);
                break;
            case DeathWatchNotification notification:
                WatchedActorTerminated(notification.Actor, notification.ExistenceConfirmed);
                break;
            case RunTask runTask:
                RunTaskContinuation(runTask.Task);
                break;
        }
    }

    private void ReceiveMessage(object message)
    {
        var actor = _actor;
        if (actor is null)
        {
            _system.DeadLetterRef.Deliver(message, _currentEnvelope.Sender, _self);
            return;
        }

        if (!actor.AroundReceive(_behaviorStack[^1], message))
        {
            actor.InvokeUnhandled(message);
        }
    }

    /// <summary>Creates an instance from the Props factory and resets per-instance state.</summary>
    private ActorBase NewActor()
    {
        _behaviorStack.Clear();
        _defaultBehavior = null;
        _strategy = null;
        _timers = null;
        _awaitingConstruction = true;
        _constructedActor = null;
        ActorBase actor;
        try
        {
            actor = _props.Factory()
                ?? throw new InvalidOperationException($"The factory of {_props} returned null.");
        }
        finally
        {
            _awaitingConstruction = false;
        }

        var constructed = _constructedActor;
        _constructedActor = null;
        if (!ReferenceEquals(actor, constructed))
        {
            throw new InvalidOperationException(
                $"The factory of {_props} returned an instance it did not create; it must create a new one per call.");
        }

        actor.CompleteConstruction();
        _defaultBehavior = actor.DefaultBehavior;
        if (actor is IWithTimers withTimers)
        {
            _timers = new TimerScheduler(this);
            withTimers.Timers = _timers;
        }

        if (actor is IWithUnboundedStash withStash)
        {
            withStash.Stash = new UnboundedStash(this);
        }

        return actor;
    }

    private void HandleCreate()
    {
        try
        {
            _actor = NewActor();
            _actor.AroundPreStart();
        }
        catch (Exception e)
        {
            HandleInvokeFailure(new ActorInitializationException(_self, $"Exception during creation of {_self}", e), null);
        }
    }

    private void UpdateUserBlocked() =>
        Mailbox.SetUserBlocked(_suspendCount > 0 || _awaitingAsync || _isTerminating);
}
