from django.shortcuts import render


def freeze_list(request):
    return render(request, "freeze/freeze_list.html", {})
