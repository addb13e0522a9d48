namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// Failure, supervision, restart and stop (Akka's <c>FaultHandling</c>). A failing actor suspends itself and
/// its children and sends <see cref="Failed"/> to its parent, whose strategy answers with Resume, Recreate or
/// Terminate, or fails the parent in turn (Escalate).
/// </summary>
internal sealed partial class ActorCell
{
    private int _suspendCount;
    private IActorRef? _failedPerpetrator;
    private object? _failedMessage;
    private bool _isTerminating;

    /// <summary>
    /// The actor (or, for an escalation, its child <paramref name="perpetratorChild"/>) threw
    /// <paramref name="cause"/>: suspend and ask the parent.
    /// </summary>
    private void HandleInvokeFailure(Exception cause, LocalActorRef? perpetratorChild)
    {
        if (_isTerminating)
        {
            _system.ReportFailure(_self, cause, null, "while stopping (ignored)");
            return;
        }

        if (_failedPerpetrator is not null)
        {
            _system.ReportFailure(_self, cause, null, "while already failed and waiting for its supervisor (ignored)");
            return;
        }

        _failedMessage = perpetratorChild is null ? _currentEnvelope.Message : null;
        _failedPerpetrator = (IActorRef?)perpetratorChild ?? _self;
        SuspendNonRecursive();
        SuspendChildren(except: perpetratorChild);
        if (_parent is null)
        {
            // The user guardian has no supervisor: its failure stops the system, as in Akka.
            _system.ReportFailure(_self, cause, Directive.Stop, "guardian failed");
            _self.SendSystemMessage(Terminate.Instance);
            return;
        }

        _parent.Self.SendSystemMessage(new Failed(_self, cause));
    }

    /// <summary>Applies this actor's strategy to a failed child.</summary>
    private void HandleFailedChild(Failed failed)
    {
        if (_isTerminating)
        {
            return; // the child is being stopped with us
        }

        var stats = GetChildStats(failed.Child);
        if (stats is null)
        {
            return; // a child that has already stopped
        }

        var strategy = _strategy ??= _props.SupervisorStrategy
            ?? _actor?.InvokeSupervisorStrategy()
            ?? SupervisorStrategy.DefaultStrategy;
        Directive directive;
        var description = "processing a message";
        try
        {
            directive = strategy.Decide(failed.Cause);
        }
        catch (Exception e)
        {
            _system.ReportFailure(_self, e, Directive.Escalate, "supervisor strategy's decider threw");
            HandleInvokeFailure(e, failed.Child);
            return;
        }

        if (directive == Directive.Restart && !strategy.RequestRestartPermission(stats))
        {
            directive = Directive.Stop;
            description = "too many restarts";
        }

        _system.ReportFailure(failed.Child, failed.Cause, directive, description);
        switch (directive)
        {
            case Directive.Resume:
                failed.Child.SendSystemMessage(new Resume(failed.Cause));
                break;
            case Directive.Restart:
                failed.Child.SendSystemMessage(new Recreate(failed.Cause));
                break;
            case Directive.Stop:
                Stop(failed.Child);
                break;
            default:
                HandleInvokeFailure(failed.Cause, failed.Child);
                break;
        }
    }

    private void SuspendNonRecursive()
    {
        _suspendCount++;
        UpdateUserBlocked();
    }

    private void ResumeNonRecursive()
    {
        if (_suspendCount > 0)
        {
            _suspendCount--;
        }

        UpdateUserBlocked();
    }

    private void SuspendChildren(LocalActorRef? except)
    {
        foreach (var child in ChildrenSnapshot())
        {
            if (!ReferenceEquals(child, except))
            {
                child.SendSystemMessage(Suspend.Instance);
            }
        }
    }

    private void FaultSuspend()
    {
        SuspendNonRecursive();
        SuspendChildren(except: null);
    }

    private void FaultResume(Exception? causedByFailure)
    {
        if (_isTerminating)
        {
            return;
        }

        if (_actor is null && causedByFailure is not null)
        {
            FaultCreate(); // creation failed and the supervisor said Resume: there is nothing to resume, create
            return;
        }

        var perpetrator = _failedPerpetrator;
        ResumeNonRecursive();
        if (causedByFailure is not null)
        {
            _failedPerpetrator = null;
            _failedMessage = null;
        }

        foreach (var child in ChildrenSnapshot())
        {
            child.SendSystemMessage(new Resume(ReferenceEquals(child, perpetrator) ? causedByFailure : null));
        }
    }

    /// <summary>Restart: <c>PreRestart</c> on the failed instance, wait for the children it stopped, then
    /// <see cref="FinishRecreate"/>.</summary>
    private void FaultRecreate(Exception cause)
    {
        if (_isTerminating)
        {
            return;
        }

        if (_actor is null)
        {
            FaultCreate(); // creation failed: nothing to restart, create again
            return;
        }

        bool alreadyWaiting;
        lock (_childrenLock)
        {
            alreadyWaiting = _childrenState != ChildrenState.Normal;
        }

        if (alreadyWaiting)
        {
            // A second restart (e.g. as a survivor of a restarting parent) while the first still waits for
            // children: that restart will finish the job; only keep the suspend count balanced (as Akka).
            FaultResume(causedByFailure: null);
            return;
        }

        var failedActor = _actor;
        var failedMessage = _failedMessage;
        _timers?.CancelAll();
        AbandonAsyncHandler();
        try
        {
            failedActor.AroundPreRestart(cause, failedMessage);
        }
        catch (Exception e)
        {
            _system.ReportFailure(_self, e, null, "PreRestart threw (restart goes on)");
        }

        if (!WaitForDyingChildren(ChildrenState.Recreating, cause))
        {
            FinishRecreate(cause);
        }
    }

    /// <summary>A fresh instance from the factory, <c>PostRestart</c>, then restart the surviving children.</summary>
    private void FinishRecreate(Exception cause)
    {
        var survivors = ChildrenSnapshot();
        ResumeNonRecursive();
        _failedPerpetrator = null;
        _failedMessage = null;
        _actor = null;
        try
        {
            _actor = NewActor();
            _actor.AroundPostRestart(cause);
            foreach (var child in survivors)
            {
                child.SendSystemMessage(new Recreate(cause));
            }
        }
        catch (Exception e)
        {
            _actor = null; // a half-started instance gets no PreRestart/PostStop
            HandleInvokeFailure(new ActorInitializationException(_self, $"Exception during restart of {_self}", e), null);
        }
    }

    /// <summary>Creation failed and the supervisor said Restart or Resume: stop any children, then create.</summary>
    private void FaultCreate()
    {
        foreach (var child in ChildrenSnapshot())
        {
            Stop(child);
        }

        if (!WaitForDyingChildren(ChildrenState.Creating, null))
        {
            FinishCreate();
        }
    }

    private void FinishCreate()
    {
        ResumeNonRecursive();
        _failedPerpetrator = null;
        _failedMessage = null;
        HandleCreate();
    }

    /// <summary>Stop: no more user messages, stop the children, and finish once they are all gone.</summary>
    private void HandleTerminate()
    {
        if (_isTerminating)
        {
            return;
        }

        UnwatchWatchedActors();
        _isTerminating = true;
        UpdateUserBlocked();
        AbandonAsyncHandler();
        LocalActorRef[] children;
        lock (_childrenLock)
        {
            _childrenState = ChildrenState.Terminating;
            children = new LocalActorRef[_children.Count];
            var i = 0;
            foreach (var stats in _children.Values)
            {
                children[i++] = stats.Child;
                _toDie.Add(stats.Child);
            }
        }

        foreach (var child in children)
        {
            child.SendSystemMessage(Terminate.Instance);
        }

        if (children.Length == 0)
        {
            FinishTerminate();
        }
    }

    /// <summary>All children are gone: <c>PostStop</c>, close the mailbox, tell the parent and the watchers.</summary>
    private void FinishTerminate()
    {
        var actor = _actor;
        try
        {
            _timers?.CancelAll();
            actor?.AroundPostStop();
        }
        catch (Exception e)
        {
            _system.ReportFailure(_self, e, null, "PostStop threw");
        }
        finally
        {
            _actor = null;
            _behaviorStack.Clear();
            _defaultBehavior = null;
            _strategy = null;
            _timers = null;
            lock (_childrenLock)
            {
                _childrenState = ChildrenState.Terminated;
            }

            Mailbox.Close();
            _parent?.Self.SendSystemMessage(new DeathWatchNotification(_self, existenceConfirmed: true));
            TellWatchersWeDied();
            if (_parent is null)
            {
                _system.OnGuardianTerminated();
            }
        }
    }
}
